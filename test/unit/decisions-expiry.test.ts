import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { CallerAuthentication } from "../../core/decisions/CallerAuthentication.ts"
import { Decisions, type CallerIdentity, type WorkspaceUser } from "../../core/decisions/Decisions.ts"
import { DecisionStore } from "../../core/decisions/DecisionStore.ts"
import { isoAt } from "../../core/kernel/Timestamp.ts"
import { DecisionsMemory } from "../support/DecisionsMemory.ts"

const admin: WorkspaceUser = { organizationId: "acme", email: "admin@acme.test", isAdmin: true }

const setUp = Effect.gen(function* () {
  const decisions = yield* Decisions
  yield* decisions.createRole(admin, { slug: "ops", name: "Ops" })
  yield* decisions.assign(admin, "ops", admin.email)
  const key = yield* decisions.createKey(admin, "agent")
  return (yield* (yield* CallerAuthentication).authenticate(key.plaintext)) as CallerIdentity
})

describe("decision expiry", () => {
  it.effect("the sweep writes due decisions as expired (default option applied) and leaves others alone", () =>
    Effect.gen(function* () {
      const decisions = yield* Decisions
      const store = yield* DecisionStore
      const caller = yield* setUp
      const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
      const soon = yield* decisions.create(caller, {
        title: "Soon",
        roleSlug: "ops",
        expiresAt: isoAt(now + 60_000),
        options: [{ label: "Yes", default: true }, { label: "No" }]
      })
      const later = yield* decisions.create(caller, {
        title: "Later",
        roleSlug: "ops",
        expiresAt: isoAt(now + 3_600_000),
        options: [{ label: "Yes" }, { label: "No" }]
      })
      assert.strictEqual(yield* decisions.expireDue(), 0)
      yield* TestClock.adjust("61 seconds")
      assert.strictEqual(yield* decisions.expireDue(), 1)
      assert.strictEqual(yield* decisions.expireDue(), 0)
      const stored = yield* store.get("acme", soon.decision.id)
      assert.strictEqual(stored?.status, "expired")
      assert.strictEqual(stored?.resolution?.kind, "expired_default")
      assert.strictEqual(stored?.resolution?.optionId, soon.decision.options[0]!.id)
      assert.strictEqual(stored?.resolution?.decidedAt, soon.decision.expiresAt)
      assert.strictEqual((yield* store.get("acme", later.decision.id))?.status, "pending")
    }).pipe(Effect.provide(DecisionsMemory))
  )

  it.effect("a long-poll ends at expiresAt with the expired decision, without any signal", () =>
    Effect.gen(function* () {
      const decisions = yield* Decisions
      const caller = yield* setUp
      const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
      const created = yield* decisions.create(caller, {
        title: "Soon",
        roleSlug: "ops",
        expiresAt: isoAt(now + 10_000),
        options: [{ label: "Yes" }, { label: "No" }]
      })
      const waiting = yield* Effect.forkChild(decisions.waitForChange("acme", created.decision.id, 60))
      yield* TestClock.adjust("10 seconds")
      const view = yield* Fiber.join(waiting)
      assert.strictEqual(view.decision.status, "expired")
      assert.strictEqual(view.decision.resolution?.kind, "expired")
    }).pipe(Effect.provide(DecisionsMemory))
  )

  it.effect("a long-poll with no change answers the unchanged decision when the wait ends", () =>
    Effect.gen(function* () {
      const decisions = yield* Decisions
      const caller = yield* setUp
      const created = yield* decisions.create(caller, {
        title: "T",
        roleSlug: "ops",
        options: [{ label: "A" }, { label: "B" }]
      })
      const waiting = yield* Effect.forkChild(decisions.waitForChange("acme", created.decision.id, 30))
      yield* TestClock.adjust("29 seconds")
      assert.isUndefined(waiting.pollUnsafe())
      yield* TestClock.adjust("1 second")
      const view = yield* Fiber.join(waiting)
      assert.deepStrictEqual(view.decision, created.decision)
    }).pipe(Effect.provide(DecisionsMemory))
  )

  it.effect("a long-poll wakes on the change, not on a move that keeps the status", () =>
    Effect.gen(function* () {
      const decisions = yield* Decisions
      const caller = yield* setUp
      const created = yield* decisions.create(caller, {
        title: "T",
        roleSlug: "ops",
        options: [{ label: "A" }, { label: "B" }]
      })
      const waiting = yield* Effect.forkChild(decisions.waitForChange("acme", created.decision.id, 60))
      yield* TestClock.adjust("1 second")
      yield* decisions.route(admin, created.decision.id, { toEmail: "lin@acme.test" })
      yield* TestClock.adjust("1 second")
      assert.isUndefined(waiting.pollUnsafe(), "routing keeps the status: the wait goes on")
      yield* decisions.choose(admin, created.decision.id, { optionId: created.decision.options[0]!.id })
      const view = yield* Fiber.join(waiting)
      assert.strictEqual(view.decision.status, "resolved")
    }).pipe(Effect.provide(DecisionsMemory))
  )
})
