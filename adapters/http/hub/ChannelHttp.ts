import { Effect } from "effect"
import { request as httpRequest, type RequestOptions } from "node:http"
import { request as httpsRequest } from "node:https"
import { isIP } from "node:net"
import { ChannelFailure } from "../../../core/hub/Channels.ts"
import { channelStatusVerdict } from "../../../core/hub/Deliveries.ts"
import { isLoopbackAddress, isPrivateAddress } from "../../../core/kernel/Addresses.ts"
import { guardedLookup } from "../WebhookSenderHttp.ts"

export interface ChannelHttpConfig {
  /** Outside production, loopback addresses are allowed (local development and tests); nothing else private. */
  readonly allowLoopback: boolean
  /** How long one attempt may take. Default 10 seconds. */
  readonly timeoutMs?: number | undefined
}

const maxResponseBytes = 64 * 1024

/**
 * One POST to a URL a person gave the hub (a chat webhook, a push endpoint): the host's addresses are
 * checked at every attempt, as for decisions' webhooks (never a private network in production), and the
 * connection uses the address checked. Answers the status; no answer at all is a transient failure.
 */
export const postGuarded = (
  config: ChannelHttpConfig,
  input: { readonly url: string; readonly headers: Readonly<Record<string, string>>; readonly body: Uint8Array }
): Effect.Effect<number, ChannelFailure> => {
  const allowed = (ip: string) => !isPrivateAddress(ip) || (config.allowLoopback && isLoopbackAddress(ip))
  const lookup = guardedLookup(allowed)
  const timeoutMs = config.timeoutMs ?? 10_000
  return Effect.callback<number, ChannelFailure>((resume) => {
    let settled = false
    const finish = (effect: Effect.Effect<number, ChannelFailure>) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resume(effect)
    }
    const blocked = new ChannelFailure({ kind: "permanent", reason: "the address is not allowed" })
    let url: URL
    try {
      url = new URL(input.url)
    } catch {
      resume(Effect.fail(new ChannelFailure({ kind: "permanent", reason: "the address is not a URL" })))
      return
    }
    const host = url.hostname.replace(/^\[|\]$/g, "")
    if ((isIP(host) !== 0 && !allowed(host)) || (url.protocol !== "https:" && url.protocol !== "http:")) {
      resume(Effect.fail(blocked))
      return
    }
    const timer = setTimeout(() => request.destroy(new Error("timeout")), timeoutMs)
    const options: RequestOptions = {
      method: "POST",
      headers: { ...input.headers, "content-length": String(input.body.byteLength) },
      lookup
    }
    const request = (url.protocol === "https:" ? httpsRequest : httpRequest)(url, options, (response) => {
      let read = 0
      response.on("data", (chunk: Buffer) => {
        read += chunk.length
        if (read > maxResponseBytes) response.destroy()
      })
      const done = () => finish(Effect.succeed(response.statusCode ?? 0))
      response.once("end", done)
      response.once("close", done)
    })
    request.once("error", (error) =>
      finish(
        Effect.fail(
          error.message === "blocked"
            ? blocked
            : new ChannelFailure({
                kind: "transient",
                reason: error.message === "timeout" ? "no answer in time" : "could not connect"
              })
        )
      )
    )
    request.end(input.body)
    return Effect.sync(() => {
      clearTimeout(timer)
      request.destroy()
    })
  })
}

/**
 * 2xx delivered; 408, 429 and 5xx worth another attempt; any other answer refused for good (the channels'
 * retry policy, core/hub/Deliveries.ts `channelStatusVerdict`). No status at all is worth another attempt.
 */
export const failureOfStatus = (status: number, what: string): ChannelFailure | undefined => {
  const verdict = status === 0 ? "retry" : channelStatusVerdict(status)
  return verdict === "delivered"
    ? undefined
    : new ChannelFailure({
        kind: verdict === "retry" ? "transient" : "permanent",
        reason: `${what} answered ${status}`
      })
}
