import { Effect, Layer } from "effect"
import { request as httpRequest, type IncomingHttpHeaders } from "node:http"
import { request as httpsRequest } from "node:https"
import { isIP, type LookupFunction } from "node:net"
import { isLoopbackAddress, isPrivateAddress } from "../../core/decisions/WebhookUrl.ts"
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

/** The eight 16-bit groups of an IPv6 address (a dotted IPv4 tail counts as two); undefined when malformed. */
const ipv6Groups = (ip: string): ReadonlyArray<number> | undefined => {
  const dotted = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(ip)
  const text = dotted
    ? `${dotted[1]}${((+dotted[2]! << 8) | +dotted[3]!).toString(16)}:${((+dotted[4]! << 8) | +dotted[5]!).toString(16)}`
    : ip
  const [head, tail, ...rest] = text.split("::")
  if (rest.length > 0) return undefined
  const part = (chunk: string | undefined) => (chunk === undefined || chunk === "" ? [] : chunk.split(":"))
  const [left, right] = [part(head), part(tail)]
  const fill = tail === undefined ? 0 : 8 - left.length - right.length
  const groups = [...left, ...Array<string>(Math.max(fill, 0)).fill("0"), ...right].map((g) => parseInt(g, 16))
  return groups.length === 8 && groups.every((g) => g >= 0 && g <= 0xffff) ? groups : undefined
}

/**
 * Addresses the shared private-address rule lets through but a probe must not reach: IPv6 forms that carry
 * an IPv4 address a gateway may forward anywhere (IPv4-compatible, -mapped and -translated, all in `::/64`; NAT64 `64:ff9b::`,
 * 6to4 `2002::`, Teredo `2001::/32`), deprecated site-local `fec0::/10`, and the IPv4 networks reserved for
 * protocol assignments and benchmarking (`192.0.0.0/24`, `198.18.0.0/15`), which are often routed inside.
 */
export const isTunnelOrReservedAddress = (ip: string): boolean => {
  if (isIP(ip) === 4) {
    const [a, b, c] = ip.split(".").map(Number)
    return (a === 192 && b === 0 && c === 0) || (a === 198 && (b === 18 || b === 19))
  }
  if (isIP(ip) !== 6) return true
  const groups = ipv6Groups(ip.toLowerCase())
  if (groups === undefined) return true
  const [g0, g1] = groups as [number, number]
  return (
    groups.slice(0, 4).every((g) => g === 0) ||
    (g0 === 0x64 && g1 === 0xff9b) ||
    g0 === 0x2002 ||
    (g0 === 0x2001 && g1 === 0) ||
    (g0 & 0xffc0) === 0xfec0
  )
}

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
  const rule = (loopback: boolean) => (ip: string) =>
    (!isPrivateAddress(ip) && !isTunnelOrReservedAddress(ip)) || (loopback && isLoopbackAddress(ip))
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
