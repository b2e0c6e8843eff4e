import { Result } from "effect"
import { isIPv4, isIPv6 } from "node:net"

/** Loopback, private, link-local, CGNAT, unspecified and cloud-metadata IPv4 ranges. */
const privateIpv4 = (ip: string) => {
  const [a, b] = ip.split(".").map(Number) as [number, number]
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 100 && b >= 64 && b <= 127) ||
    a >= 224
  )
}

const privateIpv6 = (ip: string) => {
  const v = ip.toLowerCase()
  if (v === "::" || v === "::1") return true
  // IPv4-mapped addresses, dotted or (as URL normalises them) in hex: ::ffff:10.0.0.1 = ::ffff:a00:1.
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(v)
  if (dotted) return privateIpv4(dotted[1]!)
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(v)
  if (hex) {
    const [high, low] = [parseInt(hex[1]!, 16), parseInt(hex[2]!, 16)]
    return privateIpv4(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`)
  }
  return /^(fc|fd|fe8|fe9|fea|feb|ff)/.test(v)
}

/** True for an address a webhook may never reach in production: loopback, private, link-local, metadata, ... */
export const isPrivateAddress = (ip: string): boolean =>
  isIPv4(ip) ? privateIpv4(ip) : isIPv6(ip) ? privateIpv6(ip) : true

export const isLoopbackAddress = (ip: string): boolean =>
  (isIPv4(ip) && ip.startsWith("127.")) || ip === "::1" || /^::ffff:127\./i.test(ip)

const loopbackHost = (host: string) =>
  host === "localhost" || host.endsWith(".localhost") || (isIPv4(host) && host.startsWith("127.")) || host === "::1"

/**
 * Issue 4: a webhook URL is https, and never an address on a private or loopback network; outside
 * production, http to loopback is allowed for local development and tests. Host names are checked as
 * written; the delivery worker must check the addresses they resolve to as well (DNS can point anywhere).
 */
export const checkWebhookUrl = (
  input: string,
  options: { readonly allowLoopbackHttp: boolean }
): Result.Result<string, string> => {
  let url: URL
  try {
    url = new URL(input)
  } catch {
    return Result.fail("must be an absolute URL")
  }
  if (url.username !== "" || url.password !== "") return Result.fail("must not carry credentials")
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase()
  const loopback = loopbackHost(host)
  if (options.allowLoopbackHttp && loopback && (url.protocol === "http:" || url.protocol === "https:")) {
    return Result.succeed(url.toString())
  }
  if (url.protocol !== "https:") return Result.fail("must be an https URL")
  if (loopback || host.endsWith(".local") || host.endsWith(".internal")) {
    return Result.fail("must not point at a loopback or private network")
  }
  if ((isIPv4(host) && privateIpv4(host)) || (isIPv6(host) && privateIpv6(host))) {
    return Result.fail("must not point at a loopback or private network")
  }
  return Result.succeed(url.toString())
}
