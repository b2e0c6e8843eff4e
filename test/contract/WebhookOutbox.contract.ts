import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { randomUUID } from "node:crypto"
import { monotonicFactory } from "ulid"
import type { Decision } from "../../core/decisions/Decision.ts"
import type { DecisionAction } from "../../core/decisions/DecisionAction.ts"
import { DecisionStore } from "../../core/decisions/DecisionStore.ts"
import { RecordStoreCredentials } from "../../core/decisions/RecordStoreCredentials.ts"
import { WebhookOutbox, type WebhookDelivery } from "../../core/decisions/WebhookOutbox.ts"

// The outbox and the action queue look across organizations: each test uses times of its own year, so
// what one test leaves due never shows up in another's window.
const at = (year: number, minutes = 0) => new Date(Date.UTC(year, 0, 1) + minutes * 60_000).toISOString()

const nextId = monotonicFactory()
const freshOrganization = () => `org_${randomUUID()}`

const decisionIn = (organizationId: string, fields: Partial<Decision> = {}): Decision => ({
  id: nextId(),
  organizationId,
  callerName: "billing-agent",
  roleSlug: "finance",
  status: "pending",
  title: "Refund order 1234?",
  facts: [],
  links: [],
  options: [
    { id: "opt_yes", label: "Refund" },
    { id: "opt_no", label: "Keep" }
  ],
  urgency: "normal",
  infoRequests: [],
  assignmentHistory: [],
  createdAt: at(2040),
  updatedAt: at(2040),
  version: 0,
  ...fields
})

const action = (fields: Partial<DecisionAction> = {}): DecisionAction => ({
  id: `act_${nextId().toLowerCase()}`,
  optionId: "opt_yes",
  type: "record_update",
  summary: "Update Status on a record of tblBBBBBBBBBBBBBB",
  status: "armed",
  attempts: 0,
  target: { baseId: "appAAAAAAAAAAAAAA", tableId: "tblBBBBBBBBBBBBBB", recordId: "rec1", fields: { Status: "Done" } },
  ...fields
})

const deliveryFor = (decision: Decision, createdAt: string): WebhookDelivery => {
  const id = nextId()
  return {
    id,
    organizationId: decision.organizationId,
    webhookId: "wh_1",
    decisionId: decision.id,
    eventType: "decision.resolved",
    payload: JSON.stringify({ id, type: "decision.resolved" }),
    status: "pending",
    attempts: 0,
    nextAttemptAt: createdAt,
    createdAt
  }
}

/** The outbox, the action queue of DecisionStore and the credentials store: one suite for every adapter. */
export const WebhookOutboxContract = (
  name: string,
  store: Layer.Layer<DecisionStore | WebhookOutbox | RecordStoreCredentials, unknown>
) =>
  describe(`WebhookOutbox, action queue and credentials contract (${name})`, () => {
    layer(store)((it) => {
      it.effect("a save adds its deliveries; a stale save adds neither the change nor its deliveries", () =>
        Effect.gen(function* () {
          const decisions = yield* DecisionStore
          const outbox = yield* WebhookOutbox
          const org = freshOrganization()
          const decision = decisionIn(org)
          yield* decisions.insert(decision)
          const resolved: Decision = { ...decision, status: "resolved", version: 1 }
          const first = deliveryFor(resolved, at(2041))
          assert.isTrue(yield* decisions.save(resolved, 0, [first]))
          const stale = deliveryFor(resolved, at(2041))
          assert.isFalse(yield* decisions.save({ ...resolved, title: "changed", version: 1 }, 0, [stale]))
          const listed = yield* outbox.list(org, { limit: 10 })
          assert.deepStrictEqual(
            listed.map((d) => d.id),
            [first.id]
          )
          assert.deepStrictEqual(listed[0], first)
          assert.strictEqual((yield* decisions.get(org, decision.id))!.title, decision.title)
          // Done with, so later tests (which look across organizations) do not see it due.
          yield* outbox.record(first.id, { _tag: "Delivered", at: at(2041), statusCode: 200 })
        })
      )

      it.effect("claims due deliveries once until the lease passes, and records each outcome", () =>
        Effect.gen(function* () {
          const decisions = yield* DecisionStore
          const outbox = yield* WebhookOutbox
          const org = freshOrganization()
          const decision = decisionIn(org)
          yield* decisions.insert(decision)
          const a = deliveryFor(decision, at(2042))
          const b = deliveryFor(decision, at(2042, 10))
          assert.isTrue(yield* decisions.save({ ...decision, version: 1 }, 0, [a, b]))

          // Only what is due, oldest first, each held until the lease ends.
          const claimed = yield* outbox.claimDue(at(2042, 5), at(2042, 6), 10)
          assert.deepStrictEqual(
            claimed.map((d) => [d.id, d.nextAttemptAt]),
            [[a.id, at(2042, 6)]]
          )
          assert.deepStrictEqual(yield* outbox.claimDue(at(2042, 5), at(2042, 6), 10), [])
          // A worker that died mid-send frees it when the lease passes.
          assert.deepStrictEqual(
            (yield* outbox.claimDue(at(2042, 6), at(2042, 7), 10)).map((d) => d.id),
            [a.id]
          )

          yield* outbox.record(a.id, {
            _tag: "Retry",
            nextAttemptAt: at(2042, 20),
            error: "The endpoint answered 503.",
            statusCode: 503
          })
          yield* outbox.record(b.id, {
            _tag: "GiveUp",
            status: "failed",
            at: at(2042, 11),
            error: "The endpoint answered 410.",
            statusCode: 410
          })
          assert.deepStrictEqual(yield* outbox.claimDue(at(2042, 19), at(2042, 21), 10), [])
          const retried = yield* outbox.claimDue(at(2042, 20), at(2042, 21), 10)
          assert.deepStrictEqual(
            retried.map((d) => [d.id, d.attempts, d.lastError, d.lastStatusCode]),
            [[a.id, 1, "The endpoint answered 503.", 503]]
          )
          yield* outbox.record(a.id, { _tag: "Delivered", at: at(2042, 20), statusCode: 204 })
          const final = yield* outbox.list(org, { webhookId: "wh_1", limit: 10 })
          assert.deepStrictEqual(
            final.map((d) => [d.id, d.status, d.attempts, d.lastStatusCode, d.completedAt]),
            [
              [b.id, "failed", 1, 410, at(2042, 11)],
              [a.id, "delivered", 2, 204, at(2042, 20)]
            ]
          )
          assert.isUndefined(final[1]!.lastError)
          // Delivered and failed ones are never claimed again.
          assert.deepStrictEqual(yield* outbox.claimDue(at(2043), at(2043, 1), 10), [])
          assert.deepStrictEqual(yield* outbox.list(freshOrganization(), { limit: 10 }), [])
        })
      )

      it.effect("finds decisions whose actions are due, and those waiting for credentials, per organization", () =>
        Effect.gen(function* () {
          const decisions = yield* DecisionStore
          const org = freshOrganization()
          const queued = decisionIn(org, { actions: [action({ status: "queued", triggeredAt: at(2044, 1) })] })
          const retrying = decisionIn(org, {
            actions: [action({ status: "retrying", attempts: 1, triggeredAt: at(2044), nextAttemptAt: at(2044, 30) })]
          })
          const leased = decisionIn(org, {
            actions: [action({ status: "queued", triggeredAt: at(2044), leaseUntil: at(2044, 20) })]
          })
          const waiting = decisionIn(org, { actions: [action({ status: "waiting_for_setup", triggeredAt: at(2044) })] })
          const done = decisionIn(org, { actions: [action({ status: "succeeded", triggeredAt: at(2044) })] })
          for (const d of [queued, retrying, leased, waiting, done]) yield* decisions.insert(d)

          const ids = (list: ReadonlyArray<Decision>) => list.map((d) => d.id)
          assert.deepStrictEqual(ids(yield* decisions.actionsDue(at(2044, 10), 10)), [queued.id])
          assert.deepStrictEqual(ids(yield* decisions.actionsDue(at(2044, 30), 10)), [
            queued.id,
            leased.id,
            retrying.id
          ])
          assert.deepStrictEqual(ids(yield* decisions.actionsDue(at(2044, 30), 1)), [queued.id])
          assert.deepStrictEqual(ids(yield* decisions.actionsWaiting(org)), [waiting.id])
          assert.deepStrictEqual(yield* decisions.actionsWaiting(freshOrganization()), [])

          // Saving rewrites what the queue sees: once succeeded, it is no longer due.
          assert.isTrue(
            yield* decisions.save(
              { ...queued, actions: [{ ...queued.actions![0]!, status: "succeeded" }], version: 1 },
              0
            )
          )
          assert.deepStrictEqual(ids(yield* decisions.actionsDue(at(2044, 10), 10)), [])
        })
      )

      it.effect("keeps one set of record-store credentials per organization, the latest", () =>
        Effect.gen(function* () {
          const credentials = yield* RecordStoreCredentials
          const org = freshOrganization()
          assert.isUndefined(yield* credentials.get(org))
          const first = {
            organizationId: org,
            sealedToken: "v1.a.b",
            updatedBy: "admin@acme.test",
            updatedAt: at(2045)
          }
          yield* credentials.put(first)
          assert.deepStrictEqual(yield* credentials.get(org), first)
          const second = { ...first, sealedToken: "v1.c.d", updatedAt: at(2045, 1) }
          yield* credentials.put(second)
          assert.deepStrictEqual(yield* credentials.get(org), second)
          assert.isUndefined(yield* credentials.get(freshOrganization()))
        })
      )
    })
  })
