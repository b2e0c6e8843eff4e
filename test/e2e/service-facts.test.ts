import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { IdempotencyStoreMemory } from "../../adapters/memory/IdempotencyStoreMemory.ts"
import { sign } from "../../core/auth/Signature.ts"
import { TaskAccess } from "../../core/tasks/TaskAccess.ts"
import { RecordStore } from "../../core/tasks/RecordStore.ts"
import { pglite, sqlBackends } from "../support/Databases.ts"
import { DecisionsMemory } from "../support/DecisionsMemory.ts"
import { decisionsSqlOn } from "../support/DecisionsSql.ts"
import { decisionsClient, financeOrganization, serveDecisions } from "../support/DecisionsServed.ts"
import { request } from "../support/Http.ts"
import { testSigningKey } from "../support/ServiceSettings.ts"
import { tasksMemoryData, tasksServer, tasksSqlData, TasksServer } from "../support/TasksStack.ts"

/**
 * `POST /api/v1/facts` on the decisions service and the task inbox: the hub's facts, signed with the
 * service's own signing key, and what the services do with `organization.status.changed`.
 */

const nowSeconds = () => Math.floor(Date.now() / 1000)

const statusFact = (organizationId: string, email: string, status: string, changedAt = new Date().toISOString()) => ({
  fact: "organization.status.changed",
  subject: { email, companyId: organizationId },
  data: { organizationId, status, changedAt }
})

/** Posts a body to `/api/v1/facts`, signed with `secret` at `timestamp` unless `signature` says otherwise. */
const postFact = (
  baseUrl: string,
  body: unknown,
  options: { readonly secret?: string; readonly timestamp?: number; readonly signature?: string | null } = {}
) => {
  const raw = typeof body === "string" ? body : JSON.stringify(body)
  const timestamp = options.timestamp ?? nowSeconds()
  const signature =
    options.signature === undefined
      ? sign({ secret: options.secret ?? testSigningKey, timestamp, payload: raw })
      : options.signature
  return request(`${baseUrl}/api/v1/facts`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-platform-timestamp": String(timestamp),
      ...(signature === null ? {} : { "x-platform-signature": signature })
    },
    body: raw
  })
}

const decisionsBackends = [
  { name: "memory", data: Layer.merge(DecisionsMemory, IdempotencyStoreMemory) },
  { name: "sql", data: decisionsSqlOn(pglite) }
]

describe.each(decisionsBackends)("facts at the decisions service ($name adapters)", (backend) => {
  it.live(
    "answers 202 to a signed fact; a suspended organization's keys and tokens are refused until it is active",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { baseUrl } = yield* serveDecisions(backend.data)
          const org = `acme-${randomUUID()}`
          const other = `globex-${randomUUID()}`
          const acme = yield* financeOrganization(baseUrl, org)
          const globex = yield* financeOrganization(baseUrl, other)
          const { caller, workspace } = decisionsClient(baseUrl)
          assert.strictEqual((yield* caller("GET", "/api/v1/decisions", acme.key)).status, 200)

          const archived = yield* postFact(baseUrl, statusFact(org, `admin@${org}.test`, "archived"))
          assert.strictEqual(archived.status, 202, archived.text)
          assert.deepStrictEqual(archived.json, { data: { accepted: true } })
          const refused = yield* caller("GET", "/api/v1/decisions", acme.key)
          assert.strictEqual(refused.status, 401)
          assert.strictEqual(refused.json.error.code, "UNAUTHORIZED")
          const byToken = yield* workspace("GET", "/api/v1/workspace/decisions", acme.ada)
          assert.strictEqual(byToken.status, 401)
          // Another organization is untouched.
          assert.strictEqual((yield* caller("GET", "/api/v1/decisions", globex.key)).status, 200)
          assert.strictEqual((yield* workspace("GET", "/api/v1/workspace/decisions", globex.ada)).status, 200)

          // The same fact again changes nothing; an older one arriving late does not undo a newer one.
          assert.strictEqual((yield* postFact(baseUrl, statusFact(org, `ada@${org}.test`, "archived"))).status, 202)
          const active = yield* postFact(baseUrl, statusFact(org, `ada@${org}.test`, "active"))
          assert.strictEqual(active.status, 202, active.text)
          const late = statusFact(org, `ada@${org}.test`, "merged", new Date(Date.now() - 60_000).toISOString())
          assert.strictEqual((yield* postFact(baseUrl, late)).status, 202)
          assert.strictEqual((yield* caller("GET", "/api/v1/decisions", acme.key)).status, 200)
          assert.strictEqual((yield* workspace("GET", "/api/v1/workspace/decisions", acme.ada)).status, 200)
        })
      )
  )

  it.live("answers 400 naming the facts it takes for a fact it does not consume, and for bad data or JSON", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { baseUrl } = yield* serveDecisions(backend.data)
        const unknown = yield* postFact(baseUrl, { ...statusFact("org_1", "a@example.com", "active"), fact: "x.y" })
        assert.strictEqual(unknown.status, 400, unknown.text)
        assert.strictEqual(unknown.json.error.code, "validation_error")
        assert.include(unknown.json.error.message, 'Unknown fact "x.y"')
        assert.include(unknown.json.error.message, "organization.status.changed")
        assert.deepStrictEqual(
          unknown.json.error.details.map((d: { field: string }) => d.field),
          ["fact"]
        )
        const tier = yield* postFact(baseUrl, {
          fact: "subject.tier.changed",
          subject: { email: "a@example.com" },
          data: { organizationId: "org_1", tier: "monthly", changedAt: new Date().toISOString() }
        })
        assert.strictEqual(tier.status, 400, "a fact of the platform this service does not consume")

        const badData = yield* postFact(baseUrl, statusFact("org_1", "a@example.com", "paused"))
        assert.strictEqual(badData.status, 400)
        assert.deepStrictEqual(
          badData.json.error.details.map((d: { field: string }) => d.field),
          ["data.status"]
        )
        const badSubject = yield* postFact(baseUrl, { ...statusFact("org_1", "a@example.com", "active"), subject: {} })
        assert.strictEqual(badSubject.status, 400)
        const notJson = yield* postFact(baseUrl, "{not json")
        assert.strictEqual(notJson.status, 400)
        assert.strictEqual(notJson.json.error.code, "INVALID_JSON")
      })
    )
  )

  it.live("answers the same 401 for a bad, stale, missing or other key's signature, before reading the body", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { baseUrl } = yield* serveDecisions(backend.data)
        const org = `acme-${randomUUID()}`
        const acme = yield* financeOrganization(baseUrl, org)
        const fact = statusFact(org, `admin@${org}.test`, "archived")
        const answers = [
          yield* postFact(baseUrl, fact, { secret: "another-signing-key-0123456789" }),
          yield* postFact(baseUrl, fact, { timestamp: nowSeconds() - 301 }),
          yield* postFact(baseUrl, fact, { timestamp: nowSeconds() + 301 }),
          yield* postFact(baseUrl, fact, { signature: null }),
          yield* postFact(baseUrl, fact, { signature: `v1=${"0".repeat(64)}` }),
          yield* postFact(baseUrl, "{not json", { signature: "v1=nothex" })
        ]
        for (const answer of answers) {
          assert.strictEqual(answer.status, 401, answer.text)
          assert.deepStrictEqual(answer.json, answers[0]!.json)
        }
        // None of them was taken.
        assert.strictEqual((yield* decisionsClient(baseUrl).caller("GET", "/api/v1/decisions", acme.key)).status, 200)
      })
    )
  )

  it.live("answers 503 and takes nothing while the service has no signing key", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { baseUrl } = yield* serveDecisions(backend.data, { settings: { decisionsSigningKey: undefined } })
        const answer = yield* postFact(baseUrl, statusFact("org_1", "a@example.com", "archived"))
        assert.strictEqual(answer.status, 503)
        assert.strictEqual(answer.json.error.code, "UNAVAILABLE")
      })
    )
  )
})

const tasksBackends = [
  { name: "memory", data: tasksMemoryData },
  ...sqlBackends.map((backend) => ({ name: backend.name, data: tasksSqlData(backend) }))
]

for (const backend of tasksBackends) {
  describe(`facts at the task inbox (${backend.name} adapters)`, () =>
    layer(tasksServer(backend.data), { excludeTestServices: true })((it) => {
      it.effect(
        "a person whose organizations are all suspended has their keys and sessions refused until one is active",
        () =>
          Effect.gen(function* () {
            const { baseUrl } = yield* TasksServer
            const access = yield* TaskAccess
            const records = yield* RecordStore
            const email = `ada.${randomUUID().slice(0, 8)}@example.com`
            const record = yield* records.create("collaborators", { email, name: "Ada" })
            const { key } = yield* access.createApiKey({ id: record.id, email, name: "Ada" }, "tests")
            const { cookie } = yield* access.startSession(email, "Ada")
            const byKey = () => request(`${baseUrl}/api/tasks`, { headers: { "x-api-key": key } })
            const bySession = () => request(`${baseUrl}/api/tasks`, { headers: { cookie: `tasks_session=${cookie}` } })
            const me = () => request(`${baseUrl}/auth/me`, { headers: { cookie: `tasks_session=${cookie}` } })
            assert.strictEqual((yield* byKey()).status, 200)
            assert.strictEqual((yield* bySession()).status, 200)

            const first = `org_${randomUUID()}`
            const second = `org_${randomUUID()}`
            assert.strictEqual((yield* postFact(baseUrl, statusFact(first, email, "archived"))).status, 202)
            for (const answer of [yield* byKey(), yield* bySession(), yield* me()]) {
              assert.strictEqual(answer.status, 401)
              assert.isString(answer.json.error)
            }
            // An organization of theirs that is active is enough.
            assert.strictEqual((yield* postFact(baseUrl, statusFact(second, email, "active"))).status, 202)
            assert.strictEqual((yield* byKey()).status, 200)
            assert.strictEqual((yield* postFact(baseUrl, statusFact(second, email, "deleted"))).status, 202)
            assert.strictEqual((yield* bySession()).status, 401)
            assert.strictEqual((yield* postFact(baseUrl, statusFact(first, email, "active"))).status, 202)
            assert.strictEqual((yield* byKey()).status, 200)
            assert.strictEqual((yield* bySession()).status, 200)
            assert.strictEqual((yield* me()).status, 200)
          })
      )

      it.effect("answers 400 for an unknown fact and 401 for a bad signature, in the envelope", () =>
        Effect.gen(function* () {
          const { baseUrl } = yield* TasksServer
          const unknown = yield* postFact(baseUrl, {
            fact: "org.renamed",
            subject: { email: "a@example.com" },
            data: {}
          })
          assert.strictEqual(unknown.status, 400, unknown.text)
          assert.strictEqual(unknown.json.error.code, "VALIDATION_ERROR")
          assert.include(unknown.json.error.message, 'Unknown fact "org.renamed"')
          const forged = yield* postFact(baseUrl, statusFact("org_1", "a@example.com", "archived"), {
            secret: "another-signing-key-0123456789"
          })
          assert.strictEqual(forged.status, 401)
          assert.strictEqual(forged.json.error.code, "UNAUTHORIZED")
        })
      )
    }))
}
