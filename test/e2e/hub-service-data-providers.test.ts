import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { verify } from "../../core/auth/IdentityToken.ts"
import { request } from "../support/Http.ts"
import { adminKey, serveAdmin } from "../support/HubAdmin.ts"
import { headersOf, issuer, nowMs, serveServiceData, signedGet, type Signed } from "../support/ServiceData.ts"
import { standIn, type Seen, type StandInAnswer } from "../support/StandIn.ts"

const provider = (baseUrl: string, name: string, query: string, options: Signed = {}) =>
  signedGet(baseUrl, `/api/v1/service-data/${name}`, query, { as: "tasks", ...options })

const asOperator = (method: string, body: unknown) => ({
  method,
  headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
  body: JSON.stringify(body)
})

const summary = { sources: 3, insights: [{ title: "orders.total is never null" }] }

/**
 * A schema-analysis stand-in registered through the operator API and promoted live; Acme (hourly) installed
 * it, Tiny (free) installed it too, Solo installed nothing. Ada is in Acme, Fay in Tiny, Sol in Solo. The
 * stand-in answers only its API key with an identity token.
 */
const setUp = (options: { readonly allowLoopback?: boolean } = {}) =>
  Effect.gen(function* () {
    yield* TestClock.setTime(nowMs)
    const admin = yield* serveAdmin()
    const state = { apiKey: "", embedKey: "" }
    const product = (seen: Seen): StandInAnswer => {
      if (seen.headers["x-workspace-api-key"] !== state.apiKey || seen.headers["x-workspace-token"] === undefined) {
        return { status: 401, json: { error: { code: "UNAUTHORIZED", message: "No." } } }
      }
      if (seen.url === "/api/v1/summary") return { status: 200, json: { data: summary } }
      if (seen.url.startsWith("/api/v1/search?")) {
        return {
          status: 200,
          json: {
            data: {
              results: [
                { title: "orders table", score: 0.4, href: "/sources/orders" },
                { title: "order lines", score: 0.9, href: "https://elsewhere.test/x" },
                { score: 1 }
              ]
            }
          }
        }
      }
      return { status: 404, json: {} }
    }
    const service = yield* standIn(product)
    const call = (method: string, path: string, body: unknown) =>
      request(`${admin.baseUrl}/api/v1/admin${path}`, asOperator(method, body))
    const registered = yield* call("POST", "/services", {
      id: "schema-analysis",
      displayName: "Schema analysis",
      baseUrl: service.url
    })
    assert.strictEqual(registered.status, 201)
    state.apiKey = registered.json.data.credentials.apiKey
    state.embedKey = registered.json.data.credentials.embedKey
    yield* admin.registry.recordConformance("schema-analysis", {
      ranAt: new Date(nowMs).toISOString(),
      passed: true,
      checks: [{ name: "health", passed: true }]
    })
    assert.strictEqual((yield* call("POST", "/services/schema-analysis/promote", {})).status, 200)
    const consents = { consents: { companyId: true, accessClaims: false, embed: false } }
    const orgs: Record<string, string> = {}
    for (const [name, tier, person, installs] of [
      ["Acme", "hourly", "ada@acme.test", true],
      ["Tiny", "free", "fay@tiny.test", true],
      ["Solo", "monthly", "sol@solo.test", false]
    ] as const) {
      const org = (yield* call("POST", "/orgs", { name, tier })).json.data.org.id as string
      orgs[name] = org
      yield* call("POST", "/users", { email: person, name: person, verified: true })
      yield* call("POST", `/orgs/${org}/members`, { email: person, role: "MEMBER" })
      if (installs)
        assert.strictEqual((yield* call("PUT", `/orgs/${org}/installations/schema-analysis`, consents)).status, 200)
    }
    const { baseUrl } = yield* serveServiceData({
      registry: admin.registry,
      directory: admin.directory,
      allowLoopback: options.allowLoopback
    })
    return { baseUrl, service, state, orgs, product }
  })

describe("GET /api/v1/service-data/{provider}", () => {
  it.effect("answers a product's summary, read with its API key and an identity token minted for the subject", () =>
    Effect.gen(function* () {
      const { baseUrl, service, state, orgs } = yield* setUp()
      const answer = yield* provider(baseUrl, "schema-analysis", "email=Ada%40Acme.test")
      assert.strictEqual(answer.status, 200)
      assert.deepStrictEqual(answer.json, { data: { provider: "schema-analysis", degraded: false, summary } })
      const token = service.seen[0]!.headers["x-workspace-token"] as string
      const claims = yield* verify({
        token,
        key: state.embedKey,
        issuer,
        audience: "schema-analysis",
        nowSeconds: nowMs / 1000
      })
      assert.strictEqual(claims.email, "ada@acme.test")
      assert.strictEqual(claims.companyId, orgs["Acme"])
    })
  )

  it.effect("answers 403 outside the caller's profile or the subject's entitlement, 404 for the unknown", () =>
    Effect.gen(function* () {
      const { baseUrl, service } = yield* setUp()
      const refusals = [
        // meeting-recaps may only search.
        yield* provider(baseUrl, "schema-analysis", "email=ada@acme.test", { caller: "meeting-recaps" }),
        // Tiny's free tier does not include the insights; Solo never installed the product.
        yield* provider(baseUrl, "schema-analysis", "email=fay@tiny.test"),
        yield* provider(baseUrl, "schema-analysis", "email=sol@solo.test"),
        // error-monitoring is not registered here at all.
        yield* provider(baseUrl, "error-monitoring", "email=ada@acme.test")
      ]
      for (const answer of refusals) {
        assert.strictEqual(answer.status, 403)
        assert.strictEqual(answer.json.error.code, "FORBIDDEN")
      }
      for (const answer of [
        yield* provider(baseUrl, "weather", "email=ada@acme.test"),
        yield* provider(baseUrl, "schema-analysis", "email=nobody@acme.test")
      ]) {
        assert.strictEqual(answer.status, 404)
        assert.strictEqual(answer.json.error.code, "NOT_FOUND")
      }
      assert.strictEqual(service.seen.length, 0)
    })
  )

  it.effect("answers 400 for a missing or malformed q, email or limit", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* setUp()
      for (const [name, query] of [
        ["search", ""],
        ["search", "q=x"],
        ["search", `q=${"x".repeat(201)}`],
        ["search", "q=orders&limit=26"],
        ["search", "q=orders&limit=0"],
        ["schema-analysis", ""],
        ["schema-analysis", "email=not-an-address"]
      ] as const) {
        const answer = yield* provider(baseUrl, name, query)
        assert.strictEqual(answer.status, 400, `${name}?${query}`)
        assert.strictEqual(answer.json.error.code, "VALIDATION_ERROR")
      }
    })
  )

  it.effect("admits only callers with a profile, signed over the raw query: the same 401 otherwise", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* setUp()
      const refusals = [
        yield* provider(baseUrl, "search", "q=orders", { key: "context-key-of-someone-else" }),
        // crm and the portal hold keys but no provider profile.
        yield* provider(baseUrl, "search", "q=orders", { caller: "crm" }),
        yield* provider(baseUrl, "search", "q=orders", { caller: "onboarding-portal" }),
        yield* provider(baseUrl, "search", "q=orders&limit=2", { signed: "limit=2&q=orders" }),
        yield* provider(baseUrl, "search", "q=ord%65rs", { signed: "q=orders" })
      ]
      for (const answer of refusals) {
        assert.strictEqual(answer.status, 401)
        assert.strictEqual(answer.text, refusals[0]!.text)
        assert.deepStrictEqual(headersOf(answer), headersOf(refusals[0]!))
      }
    })
  )

  it.effect("searches the catalog and the subject's products, best hits first, within the limit", () =>
    Effect.gen(function* () {
      const { baseUrl, service } = yield* setUp()
      const catalogOnly = yield* provider(baseUrl, "search", "q=Schema")
      assert.deepStrictEqual(catalogOnly.json, {
        data: {
          provider: "search",
          degraded: false,
          results: [{ kind: "service", service: "schema-analysis", title: "Schema analysis", score: null, href: null }]
        }
      })
      assert.strictEqual(service.seen.length, 0)
      const forAda = yield* provider(baseUrl, "search", "q=order&email=ada%40acme.test&limit=2")
      assert.strictEqual(forAda.status, 200)
      assert.deepStrictEqual(forAda.json.data.results, [
        { kind: "hit", service: "schema-analysis", title: "order lines", score: 0.9, href: null },
        { kind: "hit", service: "schema-analysis", title: "orders table", score: 0.4, href: "/sources/orders" }
      ])
      assert.strictEqual(service.seen[0]!.url, "/api/v1/search?q=order")
    })
  )

  it.effect("answers degraded, never a 5xx, when the product does not answer", () =>
    Effect.gen(function* () {
      const { baseUrl, service } = yield* setUp()
      service.answerWith(() => "drop")
      const down = yield* provider(baseUrl, "schema-analysis", "email=ada@acme.test")
      assert.strictEqual(down.status, 200)
      assert.deepStrictEqual(down.json, { data: { provider: "schema-analysis", degraded: true, summary: null } })
      service.answerWith(() => ({ status: 200, json: { summary } }))
      const malformed = yield* provider(baseUrl, "search", "q=schema&email=ada@acme.test")
      assert.strictEqual(malformed.status, 200)
      assert.isTrue(malformed.json.data.degraded)
      assert.strictEqual(malformed.json.data.results[0].service, "schema-analysis")
    })
  )

  it.effect("never calls a product at a private address where loopback is not allowed (production)", () =>
    Effect.gen(function* () {
      const { baseUrl, service } = yield* setUp({ allowLoopback: false })
      const answer = yield* provider(baseUrl, "schema-analysis", "email=ada@acme.test")
      assert.deepStrictEqual(answer.json, { data: { provider: "schema-analysis", degraded: true, summary: null } })
      assert.strictEqual(service.seen.length, 0)
    })
  )
})
