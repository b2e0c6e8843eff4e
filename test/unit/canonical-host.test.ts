import { HttpServerRequest } from "effect/http"
import { assert, describe, it } from "vitest"
import { canonicalHostRedirect } from "../../adapters/http/CanonicalHost.ts"

const page = "text/html,application/xhtml+xml"

/** A request as the listener sees it: a path, and the headers a browser sends. */
const request = (method: string, path: string, headers: Record<string, string>) =>
  HttpServerRequest.fromWeb(new Request(`http://listener${path}`, { method, headers })).modify({ url: path })

const locationOf = (redirect: ReturnType<ReturnType<typeof canonicalHostRedirect>>) =>
  redirect === undefined ? undefined : [redirect.status, redirect.headers["location"]]

describe("one address per service on this machine (adapters/http/CanonicalHost.ts)", () => {
  const toLoopback = canonicalHostRedirect("http://127.0.0.1:4000")

  it("sends a page asked for under another loopback name to the service's address, path and query kept", () => {
    for (const host of ["localhost:4000", "[::1]:4000", "LOCALHOST:4000"]) {
      assert.deepStrictEqual(
        locationOf(toLoopback(request("GET", "/tasks/x?next=%2Fa", { host, accept: page }))),
        [302, "http://127.0.0.1:4000/tasks/x?next=%2Fa"],
        host
      )
    }
    assert.deepStrictEqual(locationOf(toLoopback(request("HEAD", "/", { host: "localhost:4000", accept: page }))), [
      302,
      "http://127.0.0.1:4000/"
    ])
    const toLocalhost = canonicalHostRedirect("http://localhost:4002/")
    assert.deepStrictEqual(
      locationOf(toLocalhost(request("GET", "/auth/login", { host: "127.0.0.1:4002", accept: page }))),
      [302, "http://localhost:4002/auth/login"]
    )
  })

  it("leaves alone what is already there, API calls, changes, other ports and names that are not loopback", () => {
    const untouched = [
      request("GET", "/", { host: "127.0.0.1:4000", accept: page }),
      request("GET", "/api/v1/health", { host: "localhost:4000", accept: page }),
      request("GET", "/", { host: "localhost:4000", accept: "application/json" }),
      request("POST", "/auth/email", { host: "localhost:4000", accept: page }),
      request("GET", "/", { host: "localhost:4999", accept: page }),
      request("GET", "/", { host: "hub.example.com:4000", accept: page }),
      request("GET", "/", { accept: page })
    ]
    for (const one of untouched) assert.isUndefined(toLoopback(one), `${one.method} ${one.url} ${one.headers["host"]}`)
    // A service whose address is not a loopback name (behind a proxy) is never redirected.
    const proxied = canonicalHostRedirect("https://hub.example.com")
    assert.isUndefined(proxied(request("GET", "/", { host: "localhost:443", accept: page })))
  })
})
