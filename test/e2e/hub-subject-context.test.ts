import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Result, type Scope } from "effect"
import { TestClock } from "effect/testing"
import { SubjectContextApi } from "../../adapters/http/hub/ContextApi.ts"
import { SubjectContextHandlers } from "../../adapters/http/hub/ContextHandlers.ts"
import { DirectoryMemory } from "../../adapters/memory/hub/DirectoryMemory.ts"
import { ServiceStoreMemory } from "../../adapters/memory/hub/ServiceStoreMemory.ts"
import { serviceRoutes } from "../../adapters/http/ServiceHttp.ts"
import { sign } from "../../core/auth/Signature.ts"
import { noContextKeys, parseContextKeys, type ContextKeys } from "../../core/hub/ContextKeys.ts"
import { Directory } from "../../core/hub/Directory.ts"
import { Registry } from "../../core/hub/Registry.ts"
import { request, serveForTest, type Answer } from "../support/Http.ts"

const tasksKey = "context-key-of-the-task-inbox"
const contextKeys = Result.getOrThrow(
  parseContextKeys(
    [
      `tasks:${tasksKey}`,
      "error-monitoring:context-key-of-error-monitoring",
      "schema-analysis:context-key-of-schema-analysis",
      "meeting-recaps:context-key-of-meeting-recaps"
    ].join(",")
  )
)
const keyOf = (caller: string) => contextKeys.keyFor(caller) ?? "not-a-configured-key-at-all"

// 2026-03-01T09:00:00Z: every request is signed against the TestClock's now.
const nowMs = Date.UTC(2026, 2, 1, 9, 0, 0)
const nowSeconds = nowMs / 1000
const at = new Date(nowMs - 86_400_000).toISOString()

const data = Layer.mergeAll(
  DirectoryMemory,
  Registry.layer({ secretsKey: "hub-secrets-key-for-tests", allowLoopbackHttp: true }).pipe(
    Layer.provide(ServiceStoreMemory)
  )
)

/** Ada is an ADMIN of Acme (hourly); Bo a VIEWER with no department; Cy has no organization. */
const seed = Effect.gen(function* () {
  const directory = yield* Directory
  const registry = yield* Registry
  yield* directory.createOrg({
    id: "org-acme",
    name: "Acme",
    tier: "hourly",
    createdAt: at,
    archivedAt: null,
    mergedIntoOrgId: null,
    deletedAt: null
  })
  const users = [
    { id: "u-ada", email: "ada@acme.test", name: "Ada" },
    { id: "u-bo", email: "bo@acme.test", name: null },
    { id: "u-cy", email: "cy@solo.test", name: "Cy" }
  ]
  for (const user of users) yield* directory.createUser({ ...user, verified: true, createdAt: at })
  const engineering = { id: "d-eng", slug: "engineering", name: "Engineering" }
  yield* directory.addMember({
    orgId: "org-acme",
    userId: "u-ada",
    role: "ADMIN",
    department: engineering,
    departmentRole: { id: "r-lead", slug: "lead", name: "Lead" },
    departments: ["engineering"],
    roles: ["lead"],
    createdAt: at
  })
  yield* directory.addMember({
    orgId: "org-acme",
    userId: "u-bo",
    role: "VIEWER",
    department: null,
    departmentRole: null,
    departments: [],
    roles: [],
    createdAt: new Date(nowMs - 3_600_000).toISOString()
  })
  yield* directory.setFlag({ name: "access-claims", orgId: null, enabled: true })
  yield* directory.savePreferences("u-ada", { serviceVisible: { decisions: false }, channels: ["bell"] })
  for (const id of ["decisions", "tasks"]) {
    yield* registry.registerFirstParty({ id, displayName: id, baseUrl: `http://127.0.0.1/${id}`, credentials: {} })
    yield* registry.recordConformance(id, { ranAt: at, passed: true, checks: [] })
    yield* registry.promote(id)
  }
})

const serve = (keys: ContextKeys = contextKeys, requestsPerMinute = 1000) =>
  Effect.gen(function* () {
    const context = yield* Effect.context<Directory | Registry>()
    return yield* serveForTest(
      serviceRoutes({
        api: SubjectContextApi,
        handlers: SubjectContextHandlers({ contextKeys: keys, requestsPerMinute }),
        errors: { dialect: "hub", maxBodyBytes: 64 * 1024 }
      }).pipe(Layer.provide(Layer.succeedContext(context)))
    )
  })

interface Signed {
  readonly caller?: string | undefined
  readonly key?: string | undefined
  readonly timestamp?: number | undefined
  readonly omit?: ReadonlyArray<string>
}

/** Every header of an answer but its date, in order: what must be identical between two refusals. */
const headersOf = (answer: Answer) => [...answer.headers].filter(([name]) => name !== "date")

/** A signed GET: the signature covers the query string exactly as sent. */
const get = (baseUrl: string, query: string, options: Signed = {}) => {
  const caller = options.caller ?? "tasks"
  const timestamp = options.timestamp ?? nowSeconds
  const headers: Record<string, string> = {
    "x-workspace-service-id": caller,
    "x-platform-timestamp": String(timestamp),
    "x-platform-signature": sign({ secret: options.key ?? keyOf(caller), timestamp, payload: query })
  }
  for (const name of options.omit ?? []) delete headers[name]
  return request(`${baseUrl}/api/v1/subject-context?${query}`, { headers })
}

const setup = Effect.gen(function* () {
  yield* TestClock.setTime(nowMs)
  yield* seed
})

const run = <A, E>(effect: Effect.Effect<A, E, Directory | Registry | Scope.Scope>) =>
  Effect.provide(Effect.andThen(setup, effect), data)

describe("GET /api/v1/subject-context", () => {
  it.effect("answers the task inbox's profile: access, tool belt and team, with asOf", () =>
    run(
      Effect.gen(function* () {
        const { baseUrl } = yield* serve()
        const answer = yield* get(baseUrl, "email=Ada%40Acme.test")
        assert.strictEqual(answer.status, 200)
        assert.deepStrictEqual(answer.json, {
          data: {
            subject: { email: "ada@acme.test", companyId: "org-acme", tier: "hourly" },
            permissions: {
              orgRole: "ADMIN",
              workspaceAdmin: true,
              services: {
                decisions: { access: true, maxScope: "admin" },
                tasks: { access: true, maxScope: "admin" }
              }
            },
            access: {
              orgRole: "ADMIN",
              departments: ["engineering"],
              roles: ["lead"],
              permissions: ["tasks.proposal.approve", "tasks.task.delegate", "tasks.task.read", "tasks.task.write"]
            },
            toolBelt: ["tasks"],
            team: {
              organizationId: "org-acme",
              name: "Acme",
              members: [
                {
                  email: "ada@acme.test",
                  name: "Ada",
                  role: "ADMIN",
                  department: { id: "d-eng", slug: "engineering", name: "Engineering" },
                  departmentRole: { id: "r-lead", slug: "lead", name: "Lead" }
                },
                { email: "bo@acme.test", name: null, role: "VIEWER", department: null, departmentRole: null }
              ]
            },
            preferences: { serviceVisible: { decisions: false, tasks: true } },
            asOf: new Date(nowMs).toISOString()
          }
        })
      })
    )
  )

  it.effect("gives each caller its own profile and namespace", () =>
    run(
      Effect.gen(function* () {
        const { baseUrl } = yield* serve()
        const fields = (json: any) =>
          ["access", "toolBelt", "team"].filter((field) => Object.hasOwn(json.data, field)).join(",")
        const errors = yield* get(baseUrl, "email=ada@acme.test", { caller: "error-monitoring" })
        assert.strictEqual(fields(errors.json), "access,team")
        assert.deepStrictEqual(errors.json.data.access.permissions, [
          "error-monitoring.automation.manage",
          "error-monitoring.ticket.read",
          "error-monitoring.ticket.update"
        ])
        const schema = yield* get(baseUrl, "email=ada@acme.test", { caller: "schema-analysis" })
        assert.strictEqual(fields(schema.json), "access")
        assert.deepStrictEqual(schema.json.data.access.permissions, [
          "schema-analysis.insight.read",
          "schema-analysis.source.manage",
          "schema-analysis.source.read"
        ])
        const recaps = yield* get(baseUrl, "email=ada@acme.test", { caller: "meeting-recaps" })
        assert.strictEqual(fields(recaps.json), "toolBelt,team")
        const tasks = yield* get(baseUrl, "email=ada@acme.test")
        assert.strictEqual(fields(tasks.json), "access,toolBelt,team")
      })
    )
  )

  it.effect("leaves access out when the access-claims flag is off for the organization", () =>
    run(
      Effect.gen(function* () {
        const directory = yield* Directory
        yield* directory.setFlag({ name: "access-claims", orgId: "org-acme", enabled: false })
        const { baseUrl } = yield* serve()
        const answer = yield* get(baseUrl, "email=ada@acme.test")
        assert.strictEqual(answer.status, 200)
        assert.isFalse(Object.hasOwn(answer.json.data, "access"))
        assert.isTrue(Object.hasOwn(answer.json.data, "team"))
      })
    )
  )

  it.effect("a user without an organization: free tier, no company id, no team, no access", () =>
    run(
      Effect.gen(function* () {
        const { baseUrl } = yield* serve()
        const answer = yield* get(baseUrl, "email=cy@solo.test")
        assert.strictEqual(answer.status, 200)
        assert.deepStrictEqual(answer.json.data.subject, { email: "cy@solo.test", tier: "free" })
        assert.deepStrictEqual(Object.keys(answer.json.data).sort(), [
          "asOf",
          "permissions",
          "preferences",
          "subject",
          "toolBelt"
        ])
        assert.deepStrictEqual(answer.json.data.toolBelt, ["decisions", "tasks"])
      })
    )
  )

  it.effect("answers 404 when no workspace user has that email, 400 for a malformed one", () =>
    run(
      Effect.gen(function* () {
        const { baseUrl } = yield* serve()
        const unknown = yield* get(baseUrl, "email=nobody@acme.test")
        assert.strictEqual(unknown.status, 404)
        assert.strictEqual(unknown.json.error.code, "NOT_FOUND")
        const malformed = yield* get(baseUrl, "email=not-an-email")
        assert.strictEqual(malformed.status, 400)
        assert.strictEqual(malformed.json.error.code, "VALIDATION_ERROR")
      })
    )
  )

  it.effect("answers the same 401, byte for byte, to every bad credential", () =>
    run(
      Effect.gen(function* () {
        const { baseUrl } = yield* serve()
        const query = "email=ada%40acme.test"
        const refusals = [
          yield* get(baseUrl, query, { key: "context-key-of-someone-else" }),
          yield* get(baseUrl, query, { caller: "decisions" }),
          yield* get(baseUrl, query, { caller: "decisions", key: tasksKey }),
          yield* get(baseUrl, query, { timestamp: nowSeconds - 301 }),
          yield* get(baseUrl, query, { timestamp: nowSeconds + 301 }),
          yield* get(baseUrl, query, { omit: ["x-platform-signature"] }),
          yield* get(baseUrl, query, { omit: ["x-platform-timestamp"] }),
          yield* get(baseUrl, query, { omit: ["x-workspace-service-id"] }),
          // Signed over the decoded query instead of the raw one: not what was sent.
          yield* request(`${baseUrl}/api/v1/subject-context?${query}`, {
            headers: {
              "x-workspace-service-id": "tasks",
              "x-platform-timestamp": String(nowSeconds),
              "x-platform-signature": sign({ secret: tasksKey, timestamp: nowSeconds, payload: "email=ada@acme.test" })
            }
          })
        ]
        const first = refusals[0]!
        assert.strictEqual(first.status, 401)
        assert.deepStrictEqual(first.json, {
          error: { code: "UNAUTHORIZED", message: "Missing or invalid credentials." }
        })
        for (const answer of refusals) {
          assert.strictEqual(answer.status, 401)
          assert.strictEqual(answer.text, first.text)
          assert.deepStrictEqual(headersOf(answer), headersOf(first))
        }
        // The edge of the window still passes.
        assert.strictEqual((yield* get(baseUrl, query, { timestamp: nowSeconds - 300 })).status, 200)
      })
    )
  )

  it.effect("answers 501 NOT_CONFIGURED to everyone when no context keys are configured", () =>
    run(
      Effect.gen(function* () {
        const { baseUrl } = yield* serve(noContextKeys)
        for (const answer of [
          yield* get(baseUrl, "email=ada@acme.test"),
          yield* get(baseUrl, "email=x", { key: "k" })
        ]) {
          assert.strictEqual(answer.status, 501)
          assert.strictEqual(answer.json.error.code, "NOT_CONFIGURED")
        }
      })
    )
  )

  it.effect("answers 429 with Retry-After past a caller's quota, without touching another caller's", () =>
    run(
      Effect.gen(function* () {
        const { baseUrl } = yield* serve(contextKeys, 2)
        // Requests in the caller's name that fail the signature spend none of its quota.
        for (let i = 0; i < 3; i++) {
          assert.strictEqual((yield* get(baseUrl, "email=ada@acme.test", { key: "forged-key-0123456789" })).status, 401)
        }
        for (let i = 0; i < 2; i++) assert.strictEqual((yield* get(baseUrl, "email=ada@acme.test")).status, 200)
        const limited = yield* get(baseUrl, "email=ada@acme.test")
        assert.strictEqual(limited.status, 429)
        assert.strictEqual(limited.json.error.code, "RATE_LIMITED")
        assert.strictEqual(limited.headers.get("retry-after"), "60")
        // Another caller keeps its own share.
        const other = yield* get(baseUrl, "email=ada@acme.test", { caller: "schema-analysis" })
        assert.strictEqual(other.status, 200)
        yield* TestClock.adjust("61 seconds")
        const next = yield* get(baseUrl, "email=ada@acme.test", { timestamp: nowSeconds + 61 })
        assert.strictEqual(next.status, 200)
      })
    )
  )
})
