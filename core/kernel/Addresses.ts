import { isIP, isIPv4, isIPv6 } from "node:net"

/**
 * Which network addresses a server-side request (a webhook delivery, a conformance probe) may reach. A host
 * name is resolved first and every address it resolves to is checked, then the checked address is the one
 * connected to (adapters/http/WebhookSenderHttp.ts `guardedLookup`).
 */

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

const privateOrLocal = (ip: string): boolean => (isIPv4(ip) ? privateIpv4(ip) : isIPv6(ip) ? privateIpv6(ip) : true)

export const isLoopbackAddress = (ip: string): boolean =>
  (isIPv4(ip) && ip.startsWith("127.")) || ip === "::1" || /^::ffff:127\./i.test(ip)

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
 * Addresses that look public but must not be reached either: IPv6 forms that carry
 * an IPv4 address a gateway may forward anywhere (IPv4-compatible, -mapped and -translated, all in `::/64`; NAT64 `64:ff9b::`,
 * 6to4 `2002::`, Teredo `2001::/32`), deprecated site-local `fec0::/10`, and the IPv4 networks reserved for
 * protocol assignments and benchmarking (`192.0.0.0/24`, `198.18.0.0/15`), which are often routed inside.
 */
const isTunnelOrReserved = (ip: string): boolean => {
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

/**
 * True for an address a server-side request may never reach in production: loopback, private, link-local,
 * CGNAT, multicast, cloud metadata, and the tunnel and reserved forms above. Anything that is not an IP
 * address is refused too.
 */
export const isPrivateAddress = (ip: string): boolean => privateOrLocal(ip) || isTunnelOrReserved(ip)
