import { assert, afterEach, beforeAll, describe, it } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { IdempotencyStoreMemory } from "../../adapters/memory/IdempotencyStoreMemory.ts"
import { RecordUpdaterAirtable } from "../../adapters/airtable/RecordUpdaterAirtable.ts"
import { startAirtableStandIn, type AirtableStandIn } from "../fakes/AirtableStandIn.ts"
import { DecisionsWorkers, ExpirySweep } from "../../apps/server/decisions/DecisionsRuntime.ts"
import { pglite } from "../support/Databases.ts"
import { decisionsMemory } from "../support/DecisionsMemory.ts"
import { decisionsSqlOn } from "../support/DecisionsSql.ts"
import { type Answer } from "../support/Http.ts"
import { startReceiver, type Behaviour } from "../support/WebhookReceiver.ts"
import { decisionsClient, identityToken, serveDecisions } from "../support/DecisionsServed.ts"

const recordToken = "patTestToken.0123456789abcdef"
const baseId = "appAAAAAAAAAAAAAA"
const tableId = "tblBBBBBBBBBBBBBB"

let standIn: AirtableStandIn
const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((f) => f()))
})

// Without the pause after a 429 (its own test is test/e2e/airtable-limits.test.ts): a 429 here is one transient failure.
const updater = () => RecordUpdaterAirtable({ endpointUrl: standIn.url, timeoutMs: 2_000, limiter: { pauseMillis: 0 } })

/** Every test runs on the memory adapters and on the SQL adapters (embedded PGlite), with the workers polling. */
const backends = [
  { name: "memory", data: () => Layer.merge(decisionsMemory(updater()), IdempotencyStoreMemory) },
  { name: "sql", data: () => decisionsSqlOn(pglite, updater()) }
]
let backend = backends[0]!

const serve = () =>
  serveDecisions(backend.data(), {
    settings: { decisionsCallerRequestsPerMinute: 10_000, decisionsUserRequestsPerMinute: 10_000 },
    alongside: Layer.merge(DecisionsWorkers(25), ExpirySweep(50))
  })

/** The two planes; every caller request carries a fresh idempotency key. */
const client = (baseUrl: string) => {
  const planes = decisionsClient(baseUrl)
  return {
    workspace: planes.workspace,
    caller: (method: string, path: string, key: string, body?: unknown) =>
      planes.caller(method, path, key, body, { "idempotency-key": crypto.randomUUID() })
  }
}

/** An organization with a `finance` role held by ada, a caller key, and a template whose `refund` option updates a record. */
const setUp = (baseUrl: string, org: string) =>
  Effect.gen(function* () {
    const { workspace } = client(baseUrl)
    const admin = yield* identityToken(`admin@${org}.test`, org, "ADMIN")
    const ada = yield* identityToken(`ada@${org}.test`, org)
    assert.strictEqual(
      (yield* workspace("POST", "/api/v1/workspace/roles", admin, { slug: "finance", name: "Finance" })).status,
      201
    )
    yield* workspace("POST", "/api/v1/workspace/roles/finance/assignments", admin, { memberEmail: `ada@${org}.test` })
    const key = (yield* workspace("POST", "/api/v1/workspace/keys", admin, { name: "billing-agent" })).json.data
      .plaintext
    const template = yield* workspace("POST", "/api/v1/workspace/templates", admin, {
      slug: "refund",
      name: "Refund",
      roleSlug: "finance",
      titleTemplate: "Refund order {{order}}?",
      options: [
        {
          label: "Refund",
          action: {
            type: "record_update",
            baseId,
            tableId,
            recordIdParam: "orderRecord",
            fields: {
              Status: "Refunded",
              "Approved by": "{{resolvedBy}}",
              "Approved at": "{{resolvedAt}}",
              Note: "order {{order}}"
            }
          }
        },
        { label: "Keep" }
      ]
    })
    assert.strictEqual(template.status, 201, template.text)
    return { admin, ada, key: key as string, refundOption: template.json.data.template.options[0].id as string }
  })

const raise = (baseUrl: string, key: string, order: string, record: string) =>
  Effect.map(
    client(baseUrl).caller("POST", "/api/v1/templates/refund/raise", key, { params: { order, orderRecord: record } }),
    (answer) => {
      assert.strictEqual(answer.status, 201, answer.text)
      return answer.json.data.decision.id as string
    }
  )

/** Polls `read` until `done` holds (or fails the test after `timeout`). */
const eventually = <A>(read: Effect.Effect<A>, done: (a: A) => boolean, timeout = "8 seconds") =>
  Effect.gen(function* () {
    const deadline = Date.now() + Duration.toMillis(Duration.fromInputUnsafe(timeout as Duration.Input))
    while (true) {
      const value = yield* read
      if (done(value)) return value
      if (Date.now() > deadline) return assert.fail(`never came true; last: ${JSON.stringify(value)}`)
      yield* Effect.sleep("25 millis")
    }
  })

const actionsOf = (answer: Answer) => answer.json.data.decision.actions as Array<Record<string, any>>

describe.each(backends)("record actions and signed webhooks over HTTP ($name adapters)", (current) => {
  beforeAll(() => {
    backend = current
  })

  it.live("a chosen template option updates the record in the record store, once, after an admin sets the token", () =>
    Effect.gen(function* () {
      standIn = yield* Effect.promise(() =>
        startAirtableStandIn({
          tokens: [recordToken],
          bases: {
            [baseId]: {
              [tableId]: {
                fields: ["Status", "Approved by", "Approved at", "Note"],
                records: { recOrder1042aaaaa: { Status: "Open" }, recOrder1043aaaaa: { Status: "Open" } }
              }
            }
          }
        })
      )
      cleanups.push(() => standIn.close())
      const { baseUrl } = yield* serve()
      const org = yield* setUp(baseUrl, "acme")
      const { workspace } = client(baseUrl)

      const id = yield* raise(baseUrl, org.key, "1042", "recOrder1042aaaaa")
      const armed = yield* workspace("GET", `/api/v1/workspace/decisions/${id}`, org.ada)
      assert.deepStrictEqual(
        actionsOf(armed).map((a) => [a.optionId, a.type, a.status, a.attempts]),
        [[org.refundOption, "record_update", "armed", 0]]
      )
      // Names, never values: the summary names fields and the table, not the record or what is written.
      const view = actionsOf(armed)[0]!
      assert.hasAllKeys(view, ["id", "optionId", "type", "summary", "status", "attempts"])
      assert.include(view.summary, "Approved by")
      assert.strictEqual(view.summary, "Update Approved at, Approved by, Note, Status on a record of tblBBBBBBBBBBBBBB")
      assert.notInclude(JSON.stringify(actionsOf(armed)), "recOrder1042aaaaa")
      assert.notInclude(armed.text, "Refunded")

      // Chosen before the organization has a token: the action waits for setup.
      const chosen = yield* workspace("POST", `/api/v1/workspace/decisions/${id}/choose`, org.ada, {
        optionId: org.refundOption
      })
      assert.strictEqual(chosen.status, 200, chosen.text)
      assert.strictEqual(actionsOf(chosen)[0]!.status, "queued")
      yield* eventually(
        workspace("GET", `/api/v1/workspace/decisions/${id}`, org.ada),
        (a) => actionsOf(a)[0]!.status === "waiting_for_setup"
      )
      assert.strictEqual(standIn.requests.length, 0)

      // Only an admin sets the token; it is never shown again.
      const byMember = yield* workspace("PUT", "/api/v1/workspace/integrations/record-store", org.ada, {
        token: recordToken
      })
      assert.strictEqual(byMember.status, 403)
      assert.strictEqual(
        (yield* workspace("PUT", "/api/v1/workspace/integrations/record-store", org.admin, { token: "has space" }))
          .status,
        400
      )
      const set = yield* workspace("PUT", "/api/v1/workspace/integrations/record-store", org.admin, {
        token: recordToken
      })
      assert.strictEqual(set.status, 200, set.text)
      assert.strictEqual(set.json.data.recordStore.configured, true)
      assert.notInclude(set.text, recordToken)
      const status = yield* workspace("GET", "/api/v1/workspace/integrations/record-store", org.admin)
      assert.deepStrictEqual(status.json.data.recordStore.configured, true)
      assert.notInclude(status.text, recordToken)

      const done = yield* eventually(
        workspace("GET", `/api/v1/workspace/decisions/${id}`, org.ada),
        (a) => actionsOf(a)[0]!.status === "succeeded"
      )
      const action = actionsOf(done)[0]!
      assert.strictEqual(action.attempts, 1)
      assert.isDefined(action.completedAt)
      const record = standIn.bases.get(baseId)!.get(tableId)!.records.get("recOrder1042aaaaa")!.fields
      assert.deepStrictEqual(record, {
        Status: "Refunded",
        "Approved by": "ada@acme.test",
        "Approved at": done.json.data.decision.resolution.decidedAt,
        Note: "order 1042"
      })
      assert.strictEqual(standIn.requests.length, 1)
      assert.strictEqual(standIn.requests[0]!.method, "PATCH")
      assert.strictEqual(standIn.requests[0]!.authorization, `Bearer ${recordToken}`)

      // The other option's decision: its action is not triggered and nothing is written.
      const kept = yield* raise(baseUrl, org.key, "1043", "recOrder1043aaaaa")
      const declined = yield* workspace("POST", `/api/v1/workspace/decisions/${kept}/decline`, org.ada, {})
      assert.strictEqual(actionsOf(declined)[0]!.status, "not_triggered")
      yield* Effect.sleep("200 millis")
      assert.strictEqual(standIn.requests.length, 1)
      assert.deepStrictEqual(standIn.bases.get(baseId)!.get(tableId)!.records.get("recOrder1043aaaaa")!.fields, {
        Status: "Open"
      })
    })
  )

  it.live("a failing update retries, dead-letters with a safe error, and a manual retry queues it again", () =>
    Effect.gen(function* () {
      standIn = yield* Effect.promise(() =>
        startAirtableStandIn({
          tokens: [recordToken],
          bases: {
            [baseId]: {
              [tableId]: {
                fields: ["Status", "Approved by", "Approved at", "Note"],
                records: { recOrder2000aaaaa: {} }
              }
            }
          }
        })
      )
      cleanups.push(() => standIn.close())
      const { baseUrl } = yield* serve()
      const org = yield* setUp(baseUrl, "globex")
      const other = yield* setUp(baseUrl, "initech")
      const { workspace } = client(baseUrl)
      yield* workspace("PUT", "/api/v1/workspace/integrations/record-store", org.admin, { token: recordToken })
      // The test policy allows 3 attempts: two transient failures, then a permanent one.
      standIn.failNext.push({ status: 503 }, { status: 429 }, { status: 422, type: "UNKNOWN_FIELD_NAME" })

      const id = yield* raise(baseUrl, org.key, "2000", "recOrder2000aaaaa")
      const pending = yield* workspace("POST", `/api/v1/workspace/decisions/${id}/actions/${"act_x"}/retry`, org.admin)
      assert.strictEqual(pending.status, 404)
      const chosen = yield* workspace("POST", `/api/v1/workspace/decisions/${id}/choose`, org.ada, {
        optionId: org.refundOption
      })
      const actionId = actionsOf(chosen)[0]!.id as string
      const early = yield* workspace("POST", `/api/v1/workspace/decisions/${id}/actions/${actionId}/retry`, org.admin)
      assert.strictEqual(early.status, 409, early.text)
      assert.strictEqual(early.json.error.code, "invalid_transition")

      const dead = yield* eventually(
        workspace("GET", `/api/v1/workspace/decisions/${id}`, org.ada),
        (a) => actionsOf(a)[0]!.status === "dead_lettered"
      )
      const action = actionsOf(dead)[0]!
      assert.strictEqual(action.attempts, 3)
      assert.strictEqual(action.lastError, "The record store rejected the update: a field name is unknown.")
      assert.isAtMost(action.lastError.length, 200)
      assert.notMatch(dead.text, /airtable/i)

      // Another organization cannot see or retry it; a member who is not a decider may not either.
      assert.strictEqual(
        (yield* workspace("POST", `/api/v1/workspace/decisions/${id}/actions/${actionId}/retry`, other.admin)).status,
        404
      )
      const outsider = yield* identityToken("zed@globex.test", "globex")
      assert.strictEqual(
        (yield* workspace("POST", `/api/v1/workspace/decisions/${id}/actions/${actionId}/retry`, outsider)).status,
        403
      )

      const retried = yield* workspace("POST", `/api/v1/workspace/decisions/${id}/actions/${actionId}/retry`, org.ada)
      assert.strictEqual(retried.status, 200, retried.text)
      assert.strictEqual(actionsOf(retried)[0]!.status, "queued")
      const succeeded = yield* eventually(
        workspace("GET", `/api/v1/workspace/decisions/${id}`, org.ada),
        (a) => actionsOf(a)[0]!.status === "succeeded"
      )
      assert.strictEqual(actionsOf(succeeded)[0]!.attempts, 4)
      assert.strictEqual(
        standIn.bases.get(baseId)!.get(tableId)!.records.get("recOrder2000aaaaa")!.fields["Status"],
        "Refunded"
      )
    })
  )

  it.live("sends a signed webhook for needs_info, resolved, expired and cancelled, verified independently", () =>
    Effect.gen(function* () {
      standIn = yield* Effect.promise(() => startAirtableStandIn({ tokens: [] }))
      cleanups.push(() => standIn.close())
      let secret = ""
      const receiver = yield* Effect.promise(() =>
        startReceiver(
          () => secret,
          () => ({ status: 204 })
        )
      )
      cleanups.push(receiver.close)
      const { baseUrl } = yield* serve()
      const org = yield* setUp(baseUrl, "acme")
      const { caller, workspace } = client(baseUrl)
      const registered = yield* caller("POST", "/api/v1/webhooks", org.key, { url: receiver.url })
      assert.strictEqual(registered.status, 201, registered.text)
      secret = registered.json.data.secret
      const webhookId = registered.json.data.webhook.id
      const body = { title: "Ship it?", roleSlug: "finance", options: [{ label: "Yes" }, { label: "No" }] }

      const asked = (yield* caller("POST", "/api/v1/decisions", org.key, body)).json.data.decision.id
      const question = yield* workspace("POST", `/api/v1/workspace/decisions/${asked}/info-requests`, org.ada, {
        question: "Which region?"
      })
      const infoRequestId = question.json.data.decision.infoRequests[0].id
      yield* caller("POST", `/api/v1/decisions/${asked}/info-response`, org.key, { infoRequestId, answer: "EU" })
      const chosen = yield* workspace("POST", `/api/v1/workspace/decisions/${asked}/choose`, org.ada, {
        optionId: question.json.data.decision.options[0].id
      })
      assert.strictEqual(chosen.status, 200)
      const cancelled = (yield* caller("POST", "/api/v1/decisions", org.key, body)).json.data.decision.id
      yield* caller("POST", `/api/v1/decisions/${cancelled}/cancel`, org.key)
      const expiring = (yield* caller("POST", "/api/v1/decisions", org.key, {
        ...body,
        expiresAt: new Date(Date.now() + 300).toISOString()
      })).json.data.decision.id
      // Written by the expiry sweep, which dates it at expiresAt.
      const events = yield* eventually(
        Effect.sync(() => [...receiver.accepted.values()] as Array<any>),
        (all) => all.length >= 4
      )
      const types = events.map((e) => [e.data.decision.id, e.type])
      assert.deepInclude(types, [asked, "decision.needs_info"])
      assert.deepInclude(types, [asked, "decision.resolved"])
      assert.deepInclude(types, [cancelled, "decision.cancelled"])
      assert.deepInclude(types, [expiring, "decision.expired"])
      const expired = events.find((e) => e.type === "decision.expired")
      assert.strictEqual(expired.occurredAt, expired.data.decision.expiresAt)
      assert.isTrue(receiver.received.every((r) => r.verified))
      for (const received of receiver.received) {
        const parsed = JSON.parse(received.body)
        assert.strictEqual(received.headers["webhook-id"], parsed.id)
        assert.strictEqual(received.headers["webhook-timestamp"], received.headers["x-decisions-timestamp"])
        assert.hasAllKeys(parsed, ["id", "type", "occurredAt", "data"])
        assert.isUndefined(parsed.data.decision.version)
      }
      // A pending decision (after the caller's answer) sends nothing; one delivery per change.
      assert.strictEqual(receiver.received.length, 4)

      const listed = yield* workspace("GET", `/api/v1/workspace/webhooks/${webhookId}/deliveries`, org.admin)
      assert.strictEqual(listed.status, 200, listed.text)
      assert.isTrue(listed.json.data.deliveries.every((d: any) => d.status === "delivered" && d.attempts === 1))
      assert.notInclude(listed.text, secret)
      assert.strictEqual(
        (yield* workspace("GET", `/api/v1/workspace/webhooks/${webhookId}/deliveries`, org.ada)).status,
        403
      )
    })
  )

  it.live("deliveries to a receiver that fails, times out and throttles all arrive, each exactly once by id", () =>
    Effect.gen(function* () {
      standIn = yield* Effect.promise(() => startAirtableStandIn({ tokens: [] }))
      cleanups.push(() => standIn.close())
      let secret = ""
      // Per delivery: first a 500, then a hang past the 500 ms timeout, then a 429 with Retry-After, then 200.
      const faults: ReadonlyArray<Behaviour> = [
        { status: 500 },
        "hang",
        { status: 429, headers: { "retry-after": "0" } }
      ]
      const receiver = yield* Effect.promise(() =>
        startReceiver(
          () => secret,
          (attempt) => faults[attempt - 1] ?? { status: 200 }
        )
      )
      cleanups.push(receiver.close)
      let permanentSecret = ""
      const gone = yield* Effect.promise(() =>
        startReceiver(
          () => permanentSecret,
          () => ({ status: 410 })
        )
      )
      cleanups.push(gone.close)
      const { baseUrl } = yield* serve()
      const org = yield* setUp(baseUrl, "acme")
      const { caller, workspace } = client(baseUrl)
      secret = (yield* caller("POST", "/api/v1/webhooks", org.key, { url: receiver.url })).json.data.secret
      const goneHook = (yield* caller("POST", "/api/v1/webhooks", org.key, { url: gone.url })).json.data
      permanentSecret = goneHook.secret

      const body = { title: "Ship it?", roleSlug: "finance", options: [{ label: "Yes" }, { label: "No" }] }
      const ids: Array<string> = []
      for (let i = 0; i < 5; i++) {
        const id = (yield* caller("POST", "/api/v1/decisions", org.key, body)).json.data.decision.id
        yield* caller("POST", `/api/v1/decisions/${id}/cancel`, org.key)
        ids.push(id)
      }
      const accepted = yield* eventually(
        Effect.sync(() => [...receiver.accepted.values()] as Array<any>),
        (all) => all.length >= 5,
        "20 seconds"
      )
      assert.deepStrictEqual(accepted.map((e) => e.data.decision.id).sort(), [...ids].sort())
      // Exactly once each: every delivery id was answered 2xx once, after its three failed attempts.
      for (const [id, attempts] of receiver.attempts) {
        assert.strictEqual(attempts, 4, id)
        const oks = receiver.received.filter((r) => JSON.parse(r.body).id === id && r.verified).length
        assert.strictEqual(oks, 4)
      }
      // A 4xx other than 408/429 is permanent: one attempt, recorded as failed.
      const failed = yield* eventually(
        workspace("GET", `/api/v1/workspace/webhooks/${goneHook.webhook.id}/deliveries`, org.admin),
        (a) => a.json.data.deliveries.length === 5 && a.json.data.deliveries.every((d: any) => d.status === "failed")
      )
      assert.isTrue(failed.json.data.deliveries.every((d: any) => d.attempts === 1 && d.lastStatusCode === 410))
      assert.strictEqual(gone.received.length, 5)
    })
  )
})
