import { assert, describe, it } from "@effect/vitest"
import {
  CheckNames,
  conformanceReport,
  evaluate,
  isSafeMessage,
  otherAudience,
  probeRequests,
  type ProbeAnswers,
  type ProbeTarget
} from "../../core/hub/Conformance.ts"
import { ProbeFailed, type ProbeAnswer } from "../../core/hub/ServiceProbe.ts"

const answer = (status: number, body: unknown, truncated = false): ProbeAnswer => ({
  status,
  headers: { "content-type": "application/json" },
  body: typeof body === "string" ? body : JSON.stringify(body),
  truncated
})

const envelope = (code: string, message: string) => ({ error: { code, message } })
const unauthorized = answer(401, envelope("UNAUTHORIZED", "Missing or invalid credentials."))

const target: ProbeTarget = {
  id: "acme",
  baseUrl: "https://acme.example.com",
  apiKeyHeader: "X-Workspace-Api-Key",
  resourcePath: "/api/v1/summary",
  firstParty: false
}

const manifest = { service: "acme", displayName: "Acme", contractVersion: "v1", requiredTier: "free" }

/** What a conforming service answers. */
const conforming: ProbeAnswers = {
  health: answer(200, { data: { status: "ok" } }),
  ready: answer(200, { data: { status: "ready" } }),
  version: answer(200, { data: { service: "acme", contractVersion: "v1", build: "42" } }),
  manifest: answer(200, { data: manifest }),
  manifestWithoutKey: unauthorized,
  manifestWrongKey: unauthorized,
  wrongAudience: unauthorized
}

const failedChecks = (answers: ProbeAnswers, on: ProbeTarget = target) =>
  evaluate(on, answers)
    .filter((check) => !check.passed)
    .map((check) => check.name)

describe("message safety", () => {
  const safe = [
    "Missing or invalid credentials.",
    "The service is not ready.",
    "Not authenticated: send X-API-Key or sign in",
    "That is not allowed while the decision is pending.",
    "UNAUTHORIZED: sign in again",
    "This has no effect on the node you chose.",
    "Effective dates must be in the future.",
    "The column is too wide; choose fewer fields."
  ]
  const unsafe = [
    ["a stack trace", "Error: boom\n    at handler (/srv/app/index.js:12:7)"],
    ["a stack frame on one line", "failed at Object.run (server.ts:10:3)"],
    ["a file path", "cannot read /home/x/y.ts"],
    ["a bare file path", "/home/x/y.ts"],
    ["a Windows path", "C:\\app\\server.js crashed"],
    ["an environment variable name", "DATABASE_URL is not set"],
    ["another environment variable name", "missing HUB_SECRETS_KEY"],
    ["Airtable", "Airtable said no"],
    ["Postgres", "Postgres is down"],
    ["PGlite", "PGlite failed to open"],
    ["Node", "Node ran out of memory"],
    ["Effect", "Effect fiber died"],
    ["Vercel", "Vercel function timed out"],
    ["a socket error", "connect ECONNREFUSED"],
    ["an ORM's error class", "PrismaClientKnownRequestError: invalid invocation"],
    ["a database driver's error class", "MongoServerError: E11000 duplicate key"],
    ["a database's constraint text", 'duplicate key value violates unique constraint "users_pkey"'],
    ["a database's missing relation", 'relation "tickets" does not exist'],
    ["a runtime exception", "TypeError: Cannot read properties of undefined (reading 'id')"],
    ["a runtime message", "handler is not a function"],
    ["a source file and line", "failed in handler.ts:42"],
    ["process.env", "process.env.SECRET is undefined"],
    ["an empty message", ""]
  ] as const

  for (const message of safe) {
    it(`accepts ${JSON.stringify(message)}`, () => assert.isTrue(isSafeMessage(message)))
  }
  for (const [what, message] of unsafe) {
    it(`refuses ${what}`, () => assert.isFalse(isSafeMessage(message)))
  }
})

describe("conformance evaluation", () => {
  it("passes every check of a conforming service, in the listed order", () => {
    const checks = evaluate(target, conforming)
    assert.deepStrictEqual(
      checks.map((check) => check.name),
      [...CheckNames]
    )
    assert.isTrue(checks.every((check) => check.passed))
    assert.isTrue(conformanceReport(checks, "2026-01-01T00:00:00.000Z").passed)
  })

  it("accepts a not-ready service that answers 503 with the envelope", () => {
    const notReady = answer(503, envelope("UNAVAILABLE", "The service is not ready."))
    assert.deepStrictEqual(failedChecks({ ...conforming, ready: notReady }), [])
  })

  it("accepts the self-serve manifest shape naming the registered service", () => {
    const manifest = answer(200, {
      data: {
        service: "acme",
        displayName: "Acme",
        contractVersion: "v1",
        capabilities: { pages: true, events: false },
        certification: { resourcePath: "/api/v1/summary", healthPath: "/api/v1/health", recordPathTemplate: "/r/{id}" }
      }
    })
    assert.deepStrictEqual(failedChecks({ ...conforming, manifest }), [])
  })

  it("accepts a service's own `{error: <string>}` outside /api/v1 when the message is safe", () => {
    const onOwnPlane = { ...target, resourcePath: "/api/tasks" }
    const wrongAudience = answer(401, { error: "Not authenticated: send X-API-Key or sign in" })
    assert.deepStrictEqual(failedChecks({ ...conforming, wrongAudience }, onOwnPlane), [])
  })

  const stackTrace = "Error: boom\n    at handler (/srv/app/index.js:12:7) DATABASE_URL"
  const cases: ReadonlyArray<readonly [string, Partial<ProbeAnswers>, ReadonlyArray<string>, ProbeTarget?]> = [
    ["health answers 500", { health: answer(500, envelope("INTERNAL_ERROR", "Oops.")) }, ["health"]],
    ["health is not ok", { health: answer(200, { data: { status: "degraded" } }) }, ["health"]],
    ["health is not the envelope", { health: answer(200, { status: "ok" }) }, ["health"]],
    ["health is not JSON", { health: answer(200, "ok") }, ["health"]],
    ["health is cut at the body cap", { health: answer(200, { data: { status: "ok" } }, true) }, ["health"]],
    ["health cannot be reached", { health: new ProbeFailed({ reason: "unreachable" }) }, ["health"]],
    [
      "ready answers 500 with a leaking message",
      { ready: answer(500, envelope("INTERNAL_ERROR", stackTrace)) },
      ["ready", "errorBodies"]
    ],
    ["ready answers 503 without the envelope", { ready: answer(503, "down") }, ["ready", "errorBodies"]],
    ["version is v2", { version: answer(200, { data: { contractVersion: "v2" } }) }, ["version"]],
    ["version fields are not strings", { version: answer(200, { data: { build: 42 } }) }, ["version"]],
    ["version answers 404", { version: answer(404, envelope("NOT_FOUND", "Not found.")) }, ["version"]],
    [
      "the manifest names another service",
      { manifest: answer(200, { data: { ...manifest, service: "other" } }) },
      ["manifest"]
    ],
    [
      "the manifest has another contract version",
      { manifest: answer(200, { data: { ...manifest, contractVersion: "v2" } }) },
      ["manifest"]
    ],
    ["the manifest is neither shape", { manifest: answer(200, { data: { service: "acme" } }) }, ["manifest"]],
    ["the manifest refuses the right key", { manifest: unauthorized }, ["manifest"]],
    ["the manifest is open without the key", { manifestWithoutKey: conforming.manifest }, ["manifestWithoutKey"]],
    ["the manifest takes a wrong key", { manifestWrongKey: conforming.manifest }, ["manifestWrongKey"]],
    ["a wrong key answers 403", { manifestWrongKey: answer(403, envelope("FORBIDDEN", "No.")) }, ["manifestWrongKey"]],
    [
      "a 401 without the envelope",
      { manifestWithoutKey: answer(401, { error: "Unauthorized" }) },
      ["manifestWithoutKey", "errorBodies"]
    ],
    [
      "a 401 whose code says another status",
      { manifestWrongKey: answer(401, envelope("NOT_FOUND", "Not found.")) },
      ["manifestWrongKey", "errorBodies"]
    ],
    [
      "a 401 whose message names a vendor",
      { manifestWrongKey: answer(401, envelope("UNAUTHORIZED", "Airtable rejected the key")) },
      ["manifestWrongKey", "errorBodies"]
    ],
    ["a wrong-audience token is accepted", { wrongAudience: answer(200, { data: {} }) }, ["wrongAudience"]],
    [
      "`{error: <string>}` on an /api/v1 resource route",
      { wrongAudience: answer(401, { error: "Not authenticated" }) },
      ["wrongAudience", "errorBodies"]
    ],
    [
      "an unsafe `{error: <string>}` outside /api/v1",
      { wrongAudience: answer(401, { error: "at verify (/app/auth.js:3:1)" }) },
      ["wrongAudience", "errorBodies"],
      { ...target, resourcePath: "/api/tasks" }
    ],
    ["no answer in time", { wrongAudience: new ProbeFailed({ reason: "timeout" }) }, ["wrongAudience"]]
  ]

  for (const [what, changed, expected, on] of cases) {
    it(`fails ${expected.join(" and ")} when ${what}`, () => {
      const answers = { ...conforming, ...changed }
      assert.deepStrictEqual(failedChecks(answers, on), expected)
      const report = conformanceReport(evaluate(on ?? target, answers), "2026-01-01T00:00:00.000Z")
      assert.isFalse(report.passed)
      for (const check of report.checks.filter((c) => !c.passed)) {
        assert.isTrue(check.detail !== undefined && isSafeMessage(check.detail))
      }
    })
  }

  it("details never repeat the service's body", () => {
    const checks = evaluate(target, { ...conforming, ready: answer(500, envelope("INTERNAL_ERROR", stackTrace)) })
    assert.isFalse(checks.some((check) => (check.detail ?? "").includes("DATABASE_URL")))
  })

  it("an empty list of checks never passes", () => {
    assert.isFalse(conformanceReport([], "2026-01-01T00:00:00.000Z").passed)
  })
})

describe("conformance probes", () => {
  const requests = probeRequests(target, { apiKey: "right", wrongApiKey: "wrong", wrongAudienceToken: "token" })

  it("send the key in the registered header only where the contract needs it", () => {
    assert.strictEqual(requests.manifest.headers["X-Workspace-Api-Key"], "right")
    assert.strictEqual(requests.manifestWrongKey.headers["X-Workspace-Api-Key"], "wrong")
    assert.isFalse(Object.hasOwn(requests.manifestWithoutKey.headers, "X-Workspace-Api-Key"))
    assert.isFalse(Object.hasOwn(requests.health.headers, "X-Workspace-Api-Key"))
  })

  it("send the wrong-audience token with the right key to the resource path", () => {
    assert.strictEqual(requests.wrongAudience.url, "https://acme.example.com/api/v1/summary")
    assert.strictEqual(requests.wrongAudience.headers["X-Workspace-Token"], "token")
    assert.strictEqual(requests.wrongAudience.headers["X-Workspace-Api-Key"], "right")
  })

  it("let only an operator-configured (first-party) target be reached on loopback", () => {
    assert.isFalse(requests.health.operatorConfigured)
    const firstParty = probeRequests(
      { ...target, firstParty: true },
      { apiKey: "k", wrongApiKey: "w", wrongAudienceToken: "t" }
    )
    assert.isTrue(Object.values(firstParty).every((r) => r.operatorConfigured === true))
  })

  it("mint the token for an audience that is never the service's own", () => {
    for (const id of ["acme", "hub", "decisions"]) assert.notStrictEqual(otherAudience(id), id)
  })
})
