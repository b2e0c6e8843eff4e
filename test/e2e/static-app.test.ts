import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { errorEnvelopeMiddleware } from "../../adapters/http/ErrorEnvelopeMiddleware.ts"
import { contentSecurityPolicy, staticAppRoutes } from "../../adapters/http/StaticApp.ts"
import { request, serveForTest } from "../support/Http.ts"

const index = `<!doctype html><html><head><title>App</title><script type="module" src="/assets/app-abc123.js"></script></head><body></body></html>`

/** A built app as scripts/build-web.mjs leaves it. */
const builtApp = () => {
  const directory = mkdtempSync(join(tmpdir(), "hitl-static-"))
  mkdirSync(join(directory, "assets"))
  writeFileSync(join(directory, "index.html"), index)
  writeFileSync(join(directory, "assets", "app-abc123.js"), "console.log('app')")
  writeFileSync(join(directory, "robots.txt"), "User-agent: *")
  writeFileSync(join(directory, ".complete"), "{}")
  return directory
}

/** The app beside a service's own routes and its error envelope, as the services mount it. */
const serve = (options: Parameters<typeof staticAppRoutes>[0]) =>
  serveForTest(
    Layer.mergeAll(
      staticAppRoutes(options),
      HttpRouter.add("GET", "/api/v1/health", HttpServerResponse.jsonUnsafe({ data: { status: "ok" } })),
      HttpRouter.add("GET", "/auth/email/callback", HttpServerResponse.text("signed in")),
      errorEnvelopeMiddleware({ dialect: "hub", maxBodyBytes: 1024 })
    )
  )

describe("StaticApp", () => {
  it.effect("serves index.html at / and at every app path, with the strict CSP and no-cache", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serve({ directory: builtApp() })
      for (const path of ["/", "/apps/decisions/decision-01", "/notifications?filter=unread"]) {
        const answer = yield* request(`${baseUrl}${path}`, { headers: { accept: "text/html" } })
        assert.strictEqual(answer.status, 200, path)
        assert.strictEqual(answer.text, index)
        assert.strictEqual(answer.headers.get("content-type"), "text/html; charset=utf-8")
        assert.strictEqual(answer.headers.get("content-security-policy"), contentSecurityPolicy)
        assert.strictEqual(answer.headers.get("cache-control"), "no-cache")
        assert.strictEqual(answer.headers.get("x-frame-options"), "DENY")
      }
      assert.include(contentSecurityPolicy, "script-src 'self';")
      assert.include(contentSecurityPolicy, "frame-ancestors 'none'")
    }).pipe(Effect.scoped)
  )

  it.effect("caches hashed assets for a year and other files not at all; answers 304 to a matching ETag", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serve({ directory: builtApp() })
      const script = yield* request(`${baseUrl}/assets/app-abc123.js`)
      assert.strictEqual(script.status, 200)
      assert.strictEqual(script.text, "console.log('app')")
      assert.strictEqual(script.headers.get("content-type"), "text/javascript; charset=utf-8")
      assert.strictEqual(script.headers.get("cache-control"), "public, max-age=31536000, immutable")
      assert.strictEqual(script.headers.get("x-content-type-options"), "nosniff")
      const robots = yield* request(`${baseUrl}/robots.txt`)
      assert.strictEqual(robots.headers.get("cache-control"), "no-cache")
      const page = yield* request(`${baseUrl}/`)
      const again = yield* request(`${baseUrl}/`, { headers: { "if-none-match": page.headers.get("etag")! } })
      assert.strictEqual(again.status, 304)
      assert.strictEqual(again.text, "")
    }).pipe(Effect.scoped)
  )

  it.effect("never answers the API, sign-in or metadata paths, and never a missing file, with the app", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serve({ directory: builtApp() })
      for (const path of [
        "/api/v1/nothing",
        "/api",
        "/auth/unknown",
        "/.well-known/openid-configuration",
        "/assets/app-old999.js",
        "/favicon.ico",
        "/.complete"
      ]) {
        const answer = yield* request(`${baseUrl}${path}`, { headers: { accept: "text/html" } })
        assert.strictEqual(answer.status, 404, path)
        assert.deepStrictEqual(answer.json, { error: { code: "NOT_FOUND", message: "Not found." } }, path)
      }
      // The service's own routes win over the app.
      assert.deepStrictEqual((yield* request(`${baseUrl}/api/v1/health`)).json, { data: { status: "ok" } })
      assert.strictEqual((yield* request(`${baseUrl}/auth/email/callback?token=x`)).text, "signed in")
      // Other methods are not the app's.
      assert.strictEqual((yield* request(`${baseUrl}/apps/x`, { method: "POST" })).status, 404)
    }).pipe(Effect.scoped)
  )

  it.effect("writes the given settings into index.html as meta tags, escaped", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serve({ directory: builtApp(), meta: { "hitl:oidc": 'Acme "SSO" <b>' } })
      const answer = yield* request(`${baseUrl}/`)
      assert.include(answer.text, `<meta name="hitl:oidc" content="Acme &quot;SSO&quot; &lt;b&gt;" />`)
      assert.isTrue(answer.text.indexOf("hitl:oidc") < answer.text.indexOf("</head>"))
    }).pipe(Effect.scoped)
  )

  it.effect("answers a page that says how to build the app when it is not built", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serve({ directory: join(tmpdir(), "hitl-static-missing-app") })
      const answer = yield* request(`${baseUrl}/apps/decisions/inbox`)
      assert.strictEqual(answer.status, 200)
      assert.include(answer.text, "npm run build:web")
      assert.strictEqual(answer.headers.get("content-security-policy"), contentSecurityPolicy)
    }).pipe(Effect.scoped)
  )
})
