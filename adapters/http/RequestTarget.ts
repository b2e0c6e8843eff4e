import type { FindMyWay } from "effect/http"

/**
 * How every service's router matches paths. Case-sensitive: `/API/V1/...` is not `/api/v1/...` and answers
 * 404, so a rule that names a path (a body limit, a cache header, an auth plane) cannot be stepped around by
 * spelling the path differently. Trailing and repeated slashes are removed before routing (`canonicalTarget`).
 */
export const routerConfig: Partial<FindMyWay.RouterConfig> = {
  caseSensitive: true,
  ignoreTrailingSlash: true,
  ignoreDuplicateSlashes: true
}

/** RFC 3986 unreserved characters: their percent-encoded and plain spellings are the same path. */
const isUnreserved = (code: number) =>
  (code >= 0x30 && code <= 0x39) ||
  (code >= 0x41 && code <= 0x5a) ||
  (code >= 0x61 && code <= 0x7a) ||
  code === 0x2d ||
  code === 0x2e ||
  code === 0x5f ||
  code === 0x7e

const normalizeSegment = (segment: string) =>
  segment.replace(/%([0-9a-fA-F]{2})/g, (_match, hex: string) => {
    const code = Number.parseInt(hex, 16)
    return isUnreserved(code) ? String.fromCharCode(code) : `%${hex.toUpperCase()}`
  })

/**
 * A target whose path is already its one spelling: segments of unreserved characters only (no `%`), none empty
 * and none starting with a dot (so no dot segment), then an optional query string.
 */
const plainTarget = /^(?:\/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)+(?:\?.*)?$/s

/**
 * The one spelling of a request target that every rule and the router see, or undefined when the target
 * cannot name a route: the path with percent-encoded unreserved characters decoded, repeated and trailing
 * slashes removed, the query string kept as sent. An absolute-form target (`http://host/path`) becomes its
 * path. Refused: a path with a dot segment (`.`, `..`, however encoded), an encoded slash or backslash, a raw
 * backslash, `;` or `#`, and any target that is not a path. A path parameter therefore never holds a slash
 * or a dot segment, so nothing a caller sends can move a request the service makes with it elsewhere.
 */
export const canonicalTarget = (url: string): string | undefined => {
  // Most targets are already in that spelling: answered as they are, without taking them apart.
  if (plainTarget.test(url)) return url
  let target = url
  if (!target.startsWith("/")) {
    if (!/^https?:\/\//i.test(target) || !URL.canParse(target)) return undefined
    const parsed = new URL(target)
    target = parsed.pathname + parsed.search
  }
  const queryAt = target.indexOf("?")
  const path = queryAt === -1 ? target : target.slice(0, queryAt)
  const query = queryAt === -1 ? "" : target.slice(queryAt)
  if (/[;#\\]|%2f|%5c/i.test(path)) return undefined
  const segments = path
    .split("/")
    .filter((segment) => segment.length > 0)
    .map(normalizeSegment)
  if (segments.some((segment) => segment === "." || segment === "..")) return undefined
  return `/${segments.join("/")}${query}`
}
