import { Effect, Layer } from "effect"
import { lookup, type LookupAddress } from "node:dns"
import { request as httpRequest, type RequestOptions } from "node:http"
import { request as httpsRequest } from "node:https"
import { isIP, type LookupFunction } from "node:net"
import { isLoopbackAddress, isPrivateAddress } from "../../core/kernel/Addresses.ts"
import { WebhookSendFailed, WebhookSender, type WebhookAnswer } from "../../core/decisions/WebhookSender.ts"

export interface WebhookSenderHttpConfig {
  /** Outside production, loopback addresses are allowed (local development and tests); nothing else private. */
  readonly allowLoopback: boolean
}

class BlockedAddress extends Error {}

/**
 * Resolves a host the way Node would, then refuses if any address is private (the delivery
 * re-checks where the host points at every attempt). The connection uses the address checked here, so a
 * DNS answer that changes between check and connect cannot slip through.
 */
export const guardedLookup =
  (allowed: (ip: string) => boolean): LookupFunction =>
  (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, "", 4)
      const list = addresses as unknown as ReadonlyArray<LookupAddress>
      const first = list[0]
      if (first === undefined || list.some((a) => !allowed(a.address))) {
        return callback(new BlockedAddress("blocked"), "", 4)
      }
      if ((options as { all?: boolean }).all === true) return (callback as any)(null, list)
      return callback(null, first.address, first.family)
    })
  }

const maxResponseBytes = 64 * 1024

/** The WebhookSender port over node:http(s): one POST per attempt, bounded in time and in what it reads. */
export const WebhookSenderHttp = (config: WebhookSenderHttpConfig) => {
  const allowed = (ip: string) => !isPrivateAddress(ip) || (config.allowLoopback && isLoopbackAddress(ip))
  const lookupChecked = guardedLookup(allowed)
  return Layer.succeed(WebhookSender)(
    WebhookSender.of({
      send: (input) =>
        Effect.callback<WebhookAnswer, WebhookSendFailed>((resume) => {
          let settled = false
          const finish = (effect: Effect.Effect<WebhookAnswer, WebhookSendFailed>) => {
            if (settled) return
            settled = true
            clearTimeout(timer)
            resume(effect)
          }
          const url = new URL(input.url)
          const host = url.hostname.replace(/^\[|\]$/g, "")
          if (isIP(host) !== 0 && !allowed(host)) {
            resume(
              Effect.fail(
                new WebhookSendFailed({ reason: "blocked_address", message: "The endpoint's address is not allowed." })
              )
            )
            return
          }
          const timer = setTimeout(() => request.destroy(new Error("timeout")), input.timeoutMs)
          const options: RequestOptions = {
            method: "POST",
            headers: { ...input.headers, "content-length": String(Buffer.byteLength(input.body)) },
            lookup: lookupChecked
          }
          const request = (url.protocol === "https:" ? httpsRequest : httpRequest)(url, options, (response) => {
            let read = 0
            response.on("data", (chunk: Buffer) => {
              read += chunk.length
              if (read > maxResponseBytes) response.destroy()
            })
            const done = () =>
              finish(Effect.succeed({ status: response.statusCode ?? 0, retryAfter: response.headers["retry-after"] }))
            response.once("end", done)
            response.once("close", done)
          })
          request.once("error", (error) => {
            finish(
              Effect.fail(
                error instanceof BlockedAddress
                  ? new WebhookSendFailed({
                      reason: "blocked_address",
                      message: "The endpoint's address is not allowed."
                    })
                  : error.message === "timeout"
                    ? new WebhookSendFailed({ reason: "timeout", message: "The endpoint did not answer in time." })
                    : new WebhookSendFailed({ reason: "network", message: "The endpoint could not be reached." })
              )
            )
          })
          request.end(input.body)
          return Effect.sync(() => {
            clearTimeout(timer)
            request.destroy()
          })
        })
    })
  )
}
