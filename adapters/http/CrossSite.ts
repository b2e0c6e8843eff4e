import type { HttpServerRequest } from "effect/http"

/** Methods that change nothing: a cross-site page may send them. */
const reads = new Set(["GET", "HEAD", "OPTIONS"])

/**
 * True when the request comes from a page of another site: its `Origin`, or without one its `Referer`, is
 * not `publicUrl`'s origin. A request with neither (a client that is not a browser) is not cross-site.
 */
export const isCrossSite = (request: HttpServerRequest.HttpServerRequest, publicUrl: string): boolean => {
  const own = new URL(publicUrl).origin
  const origin = request.headers["origin"]
  if (origin !== undefined) return origin !== own
  const referer = request.headers["referer"]
  if (referer === undefined) return false
  try {
    return new URL(referer).origin !== own
  } catch {
    return true
  }
}

/**
 * True for a change carried by a browser from another site's page. Every route a session cookie may carry
 * refuses it (403), on the hub and the task inbox alike.
 */
export const isCrossSiteChange = (request: HttpServerRequest.HttpServerRequest, publicUrl: string): boolean =>
  !reads.has(request.method) && isCrossSite(request, publicUrl)
