import { HttpServerRequest, HttpServerResponse } from "effect/http"

/** The names of this machine a browser may use for a service listening on loopback. */
const loopbackNames = new Set(["localhost", "127.0.0.1", "[::1]"])

const defaultPort = (protocol: string) => (protocol === "https:" ? "443" : "80")

/** `host[:port]` of a Host header, as a URL reads it; undefined when it is not one. */
const hostOf = (header: string | undefined) => {
  if (header === undefined || header === "") return undefined
  try {
    const url = new URL(`http://${header}`)
    return url.username === "" && url.pathname === "/" ? { hostname: url.hostname, port: url.port || "80" } : undefined
  } catch {
    return undefined
  }
}

/**
 * One address per service on this machine. Cookies belong to a host name, so a person who opened a service as
 * `localhost` while its sign-in links and redirects name `127.0.0.1` (or the other way round) would stay
 * signed out in that tab. A page asked for under another loopback name of the same port (`localhost`,
 * `127.0.0.1`, `[::1]`) is sent to the service's own address, path and query kept, before anything else: a
 * GET or HEAD of a page (the browser asks for HTML), never an API call, whose answer a client reads as it is.
 *
 * Only for a service whose address is itself a loopback name (development): an address behind a proxy or
 * another host name is left alone. Answers the redirect, or undefined when the request is already where it
 * should be (or is not a page).
 */
export const canonicalHostRedirect = (
  publicUrl: string
): ((request: HttpServerRequest.HttpServerRequest) => HttpServerResponse.HttpServerResponse | undefined) => {
  const canonical = new URL(publicUrl)
  if (!loopbackNames.has(canonical.hostname)) return () => undefined
  const canonicalPort = canonical.port || defaultPort(canonical.protocol)
  const origin = canonical.origin
  return (request) => {
    if (request.method !== "GET" && request.method !== "HEAD") return undefined
    if (request.url.startsWith("/api/") || request.url === "/api") return undefined
    if (!(request.headers["accept"] ?? "").includes("text/html")) return undefined
    const host = hostOf(request.headers["host"])
    if (host === undefined || !loopbackNames.has(host.hostname) || host.port !== canonicalPort) return undefined
    if (host.hostname === canonical.hostname) return undefined
    return HttpServerResponse.redirect(`${origin}${request.url}`, { status: 302 })
  }
}
