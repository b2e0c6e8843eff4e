import { Effect, Layer } from "effect"
import { request as httpRequest, type IncomingHttpHeaders } from "node:http"
import { request as httpsRequest } from "node:https"
import { isIP, type LookupFunction } from "node:net"
import { isLoopbackAddress, isPrivateAddress } from "../../core/kernel/Addresses.ts"
import { ProbeFailed, ServiceProbe, type ProbeAnswer } from "../../core/hub/ServiceProbe.ts"

export interface ServiceProbeHttpConfig {
  /**
   * Outside production, loopback addresses are allowed (local services, tests); nothing else private. A
   * request for an operator-configured (first-party) service may reach loopback in any case.
   */
  readonly allowLoopback: boolean
  /**
   * A DNS lookup that refuses a host when `allowed` rejects any address it resolves to, and connects to the
   * address it checked (adapters/http/WebhookSenderHttp.ts keeps one for webhook deliveries).
   */
  readonly guardLookup: (allowed: (ip: string) => boolean) => LookupFunction
  readonly timeoutMs?: number | undefined
  readonly maxBodyBytes?: number | undefined
}

const defaultTimeoutMs = 5_000
// A conformance answer is a small JSON document; more than this is cut and judged as not JSON.
const defaultMaxBodyBytes = 16 * 1024

const flatHeaders = (headers: IncomingHttpHeaders): Record<string, string> =>
  Object.fromEntries(
    Object.entries(headers).flatMap(([name, value]) =>
      value === undefined ? [] : [[name, Array.isArray(value) ? value.join(", ") : value]]
    )
  )

/**
 * The ServiceProbe port over node:http(s): one request, never a redirect followed (node does not follow
 * them), bounded in time and in what it reads. The target must resolve to a public address unless loopback
 * is allowed; the address checked is the address connected to. (fetch cannot take such a lookup without
 * a dispatcher from undici, which is not a dependency of this package.)
 */
export const ServiceProbeHttp = (config: ServiceProbeHttpConfig) => {
  const timeoutMs = config.timeoutMs ?? defaultTimeoutMs
  const maxBodyBytes = config.maxBodyBytes ?? defaultMaxBodyBytes
  const rule = (loopback: boolean) => (ip: string) => !isPrivateAddress(ip) || (loopback && isLoopbackAddress(ip))
  return Layer.succeed(ServiceProbe)(
    ServiceProbe.of({
      send: (input) =>
        Effect.callback<ProbeAnswer, ProbeFailed>((resume) => {
          const allowed = rule(config.allowLoopback || input.operatorConfigured === true)
          const url = new URL(input.url)
          const host = url.hostname.replace(/^\[|\]$/g, "")
          // An address written in the URL is never looked up, so it is checked here.
          if ((url.protocol !== "https:" && url.protocol !== "http:") || (isIP(host) !== 0 && !allowed(host))) {
            resume(Effect.fail(new ProbeFailed({ reason: "blocked_address" })))
            return
          }
          let blocked = false
          let settled = false
          const finish = (effect: Effect.Effect<ProbeAnswer, ProbeFailed>) => {
            if (settled) return
            settled = true
            clearTimeout(timer)
            resume(effect)
          }
          const lookup = config.guardLookup((ip) => {
            const ok = allowed(ip)
            if (!ok) blocked = true
            return ok
          })
          const headers: Record<string, string> = { ...input.headers }
          if (input.body !== undefined) headers["content-length"] = String(Buffer.byteLength(input.body))
          const request = (url.protocol === "https:" ? httpsRequest : httpRequest)(
            url,
            { method: input.method, headers, lookup },
            (response) => {
              const chunks: Array<Buffer> = []
              let read = 0
              let truncated = false
              const done = () =>
                finish(
                  Effect.succeed({
                    status: response.statusCode ?? 0,
                    headers: flatHeaders(response.headers),
                    body: Buffer.concat(chunks).toString("utf8"),
                    truncated
                  })
                )
              response.on("data", (chunk: Buffer) => {
                if (truncated) return
                const room = maxBodyBytes - read
                if (chunk.length > room) {
                  chunks.push(chunk.subarray(0, room))
                  truncated = true
                  done()
                  response.destroy()
                  return
                }
                read += chunk.length
                chunks.push(chunk)
              })
              response.once("end", done)
              response.once("close", done)
            }
          )
          const timer = setTimeout(() => {
            finish(Effect.fail(new ProbeFailed({ reason: "timeout" })))
            request.destroy()
          }, timeoutMs)
          request.once("error", () =>
            finish(Effect.fail(new ProbeFailed({ reason: blocked ? "blocked_address" : "unreachable" })))
          )
          request.end(input.body)
          return Effect.sync(() => {
            clearTimeout(timer)
            request.destroy()
          })
        })
    })
  )
}
