import { assert, describe, layer } from "@effect/vitest"
import { Effect, Exit, type Layer, Scope } from "effect"
import { monotonicFactory } from "ulid"
import { ProducerOutbox, type OutboxEntry, type ProducerEvent } from "../../core/events/ProducerOutbox.ts"
import { epochMs, isoAt } from "../../core/kernel/Timestamp.ts"
import { handOverLeaseMillis } from "../../core/kernel/HandOver.ts"

const nextId = monotonicFactory()

const eventFor = (email: string): ProducerEvent => ({
  id: nextId(),
  type: "decisions.notification.created",
  service: "decisions",
  occurredAt: "2030-01-01T10:00:00.000Z",
  subject: { email, companyId: "org_1" },
  data: { kind: "task_delegated", title: `Zoë's "task" ✓`, nested: { list: [1, null] } },
  contractVersion: "v1"
})

// The tests of one adapter share its store: each starts with `drain`, so no event of another is pending.
const at = (year: number, minute = 0) => new Date(Date.UTC(year, 0, 1, 0, minute)).toISOString()

const ids = (entries: ReadonlyArray<OutboxEntry>) => entries.map((e) => e.event.id)

/** Claims and settles everything due, so the next test starts from an outbox with nothing pending. */
const drain = Effect.gen(function* () {
  const outbox = yield* ProducerOutbox
  for (const entry of yield* outbox.claimDue(at(2100), at(2100, 1), 1000)) {
    yield* outbox.record(entry.event.id, { _tag: "Delivered", at: at(2100), statusCode: 202 })
  }
})

/** The ProducerOutbox port's contract (core/events/ProducerOutbox.ts), run once per adapter and per service table. */
export const ProducerOutboxContract = (name: string, store: Layer.Layer<ProducerOutbox, unknown>) =>
  describe(`ProducerOutbox contract (${name})`, () =>
    layer(store, { excludeTestServices: true })((it) => {
      it.effect("keeps events as given, oldest first, each id once", () =>
        Effect.gen(function* () {
          const outbox = yield* ProducerOutbox
          yield* drain
          const first = eventFor("a@example.com")
          const second = eventFor("b@example.com")
          yield* outbox.enqueue(first)
          yield* outbox.enqueue(second)
          yield* outbox.enqueue({ ...first, subject: { email: "changed@example.com" } })
          assert.deepStrictEqual(yield* outbox.pending(10), [first, second])
          assert.deepStrictEqual(yield* outbox.pending(1), [first])
          assert.deepStrictEqual(yield* outbox.get(first.id), { event: first, status: "pending", attempts: 0 })
          assert.isUndefined(yield* outbox.get(nextId()))
          yield* drain
        })
      )

      it.effect(
        "hands an event enqueued while a relay takes hand-overs to it once, held for it, given back at its stop",
        () =>
          Effect.gen(function* () {
            const outbox = yield* ProducerOutbox
            yield* drain
            const scope = yield* Scope.make()
            yield* outbox.openHandOver(60_000).pipe(Scope.provide(scope))
            const before = Date.now()
            const handed = eventFor("a@example.com")
            yield* outbox.enqueue(handed)
            // A replay adds nothing and hands nothing more.
            yield* outbox.enqueue(handed)
            const taken = yield* outbox.takeHandedOver(10)
            assert.deepStrictEqual(ids(taken), [handed.id])
            const entry = taken[0]!
            assert.deepStrictEqual([entry.event, entry.status, entry.attempts], [handed, "pending", 0])
            const heldUntil = epochMs(entry.nextAttemptAt!)
            // Held for the relay's lease, at most a hand-over's (10 s): what a crash loses waits no longer.
            const lease = Math.min(60_000, handOverLeaseMillis)
            assert.isTrue(heldUntil >= before + lease && heldUntil <= Date.now() + lease, entry.nextAttemptAt)
            // Stored as handed over: no relay may claim it before its lease has passed.
            assert.deepStrictEqual(yield* outbox.get(handed.id), entry)
            assert.deepStrictEqual(ids(yield* outbox.claimDue(isoAt(Date.now()), at(2100), 10)), [])
            // Handed over and not taken when the relay stops (a shutdown): given back, due at once. The one taken
            // (its relay died sending it, say) waits for its lease.
            const left = eventFor("b@example.com")
            yield* outbox.enqueue(left)
            yield* Scope.close(scope, Exit.void)
            assert.deepStrictEqual(yield* outbox.takeHandedOver(10), [])
            assert.deepStrictEqual(yield* outbox.get(left.id), { event: left, status: "pending", attempts: 0 })
            assert.deepStrictEqual(ids(yield* outbox.claimDue(isoAt(Date.now()), at(2100), 10)), [left.id])
            assert.deepStrictEqual(ids(yield* outbox.claimDue(isoAt(heldUntil + 1000), at(2100), 10)), [handed.id])
            // Nobody takes hand-overs any more: an event is stored due at once.
            const plain = eventFor("c@example.com")
            yield* outbox.enqueue(plain)
            assert.deepStrictEqual(yield* outbox.get(plain.id), { event: plain, status: "pending", attempts: 0 })
            yield* drain
          })
      )

      it.effect("claims due events with a lease, and records delivered, retry and permanent failure", () =>
        Effect.gen(function* () {
          const outbox = yield* ProducerOutbox
          yield* drain
          const a = eventFor("a@example.com")
          const b = eventFor("b@example.com")
          const c = eventFor("c@example.com")
          for (const e of [a, b, c]) yield* outbox.enqueue(e)

          // New events are due at once, oldest first, each held until the lease ends.
          const claimed = yield* outbox.claimDue(at(2040), at(2040, 5), 2)
          assert.deepStrictEqual(claimed, [
            { event: a, status: "pending", attempts: 0, nextAttemptAt: at(2040, 5) },
            { event: b, status: "pending", attempts: 0, nextAttemptAt: at(2040, 5) }
          ])
          assert.deepStrictEqual(ids(yield* outbox.claimDue(at(2040), at(2040, 5), 10)), [c.id])
          assert.deepStrictEqual(yield* outbox.claimDue(at(2040, 4), at(2040, 9), 10), [])
          // A relay that died mid-send frees them when the lease passes.
          assert.deepStrictEqual(ids(yield* outbox.claimDue(at(2040, 5), at(2040, 10), 10)), [a.id, b.id, c.id])

          yield* outbox.record(a.id, {
            _tag: "Retry",
            nextAttemptAt: at(2040, 30),
            error: "The hub answered 503.",
            statusCode: 503
          })
          yield* outbox.record(b.id, {
            _tag: "Failed",
            at: at(2040, 6),
            error: "The hub answered 400.",
            statusCode: 400
          })
          yield* outbox.record(c.id, { _tag: "Delivered", at: at(2040, 7), statusCode: 202 })
          assert.deepStrictEqual(yield* outbox.get(b.id), {
            event: b,
            status: "failed",
            attempts: 1,
            lastError: "The hub answered 400.",
            lastStatusCode: 400,
            completedAt: at(2040, 6)
          })
          assert.deepStrictEqual(yield* outbox.get(c.id), {
            event: c,
            status: "delivered",
            attempts: 1,
            lastStatusCode: 202,
            completedAt: at(2040, 7)
          })
          // Only the retried one stays pending, due at its next attempt, with what went wrong.
          assert.deepStrictEqual(yield* outbox.pending(10), [a])
          assert.deepStrictEqual(yield* outbox.claimDue(at(2040, 29), at(2040, 31), 10), [])
          assert.deepStrictEqual(yield* outbox.claimDue(at(2040, 30), at(2040, 31), 10), [
            {
              event: a,
              status: "pending",
              attempts: 1,
              nextAttemptAt: at(2040, 31),
              lastError: "The hub answered 503.",
              lastStatusCode: 503
            }
          ])
          // A transport failure has no status code; the last one is cleared.
          yield* outbox.record(a.id, {
            _tag: "Retry",
            nextAttemptAt: at(2040, 40),
            error: "The hub could not be reached."
          })
          assert.deepStrictEqual(yield* outbox.get(a.id), {
            event: a,
            status: "pending",
            attempts: 2,
            nextAttemptAt: at(2040, 40),
            lastError: "The hub could not be reached."
          })
          yield* outbox.record(a.id, { _tag: "Delivered", at: at(2040, 41), statusCode: 200 })
          assert.deepStrictEqual(yield* outbox.get(a.id), {
            event: a,
            status: "delivered",
            attempts: 3,
            lastStatusCode: 200,
            completedAt: at(2040, 41)
          })
          // Delivered and failed events are never claimed again, and a late outcome changes nothing.
          assert.deepStrictEqual(yield* outbox.claimDue(at(2099), at(2099, 1), 10), [])
          yield* outbox.record(a.id, { _tag: "Retry", nextAttemptAt: at(2041), error: "The hub answered 503." })
          yield* outbox.record(b.id, { _tag: "Delivered", at: at(2041), statusCode: 202 })
          assert.strictEqual((yield* outbox.get(a.id))?.status, "delivered")
          assert.strictEqual((yield* outbox.get(a.id))?.attempts, 3)
          assert.strictEqual((yield* outbox.get(b.id))?.status, "failed")
          assert.deepStrictEqual(yield* outbox.pending(10), [])
        })
      )

      it.effect("records a pass's outcomes at once, each as record would, a late one changing nothing", () =>
        Effect.gen(function* () {
          const outbox = yield* ProducerOutbox
          yield* drain
          const [a, b, c, d, e] = ["a", "b", "c", "d", "e"].map((n) => eventFor(`${n}@example.com`)) as [
            ProducerEvent,
            ProducerEvent,
            ProducerEvent,
            ProducerEvent,
            ProducerEvent
          ]
          for (const event of [a, b, c, d, e]) yield* outbox.enqueue(event)
          yield* outbox.record(e.id, { _tag: "Delivered", at: at(2042), statusCode: 202 })
          assert.deepStrictEqual(ids(yield* outbox.claimDue(at(2042), at(2042, 5), 10)), [a.id, b.id, c.id, d.id])
          yield* outbox.recordAll([
            { id: a.id, outcome: { _tag: "Delivered", at: at(2042, 1), statusCode: 202 } },
            { id: b.id, outcome: { _tag: "Delivered", at: at(2042, 2), statusCode: 200 } },
            {
              id: c.id,
              outcome: { _tag: "Retry", nextAttemptAt: at(2042, 30), error: "The hub answered 503.", statusCode: 503 }
            },
            { id: d.id, outcome: { _tag: "Failed", at: at(2042, 3), error: "The hub answered 400.", statusCode: 400 } },
            // Already delivered: this late outcome is ignored.
            { id: e.id, outcome: { _tag: "Retry", nextAttemptAt: at(2042, 40), error: "late" } }
          ])
          assert.deepStrictEqual(yield* outbox.get(a.id), {
            event: a,
            status: "delivered",
            attempts: 1,
            lastStatusCode: 202,
            completedAt: at(2042, 1)
          })
          assert.deepStrictEqual(yield* outbox.get(b.id), {
            event: b,
            status: "delivered",
            attempts: 1,
            lastStatusCode: 200,
            completedAt: at(2042, 2)
          })
          assert.deepStrictEqual(yield* outbox.get(c.id), {
            event: c,
            status: "pending",
            attempts: 1,
            nextAttemptAt: at(2042, 30),
            lastError: "The hub answered 503.",
            lastStatusCode: 503
          })
          assert.deepStrictEqual(yield* outbox.get(d.id), {
            event: d,
            status: "failed",
            attempts: 1,
            lastError: "The hub answered 400.",
            lastStatusCode: 400,
            completedAt: at(2042, 3)
          })
          assert.deepStrictEqual(yield* outbox.get(e.id), {
            event: e,
            status: "delivered",
            attempts: 1,
            lastStatusCode: 202,
            completedAt: at(2042)
          })
          // A lone delivery and an empty pass.
          yield* outbox.recordAll([{ id: c.id, outcome: { _tag: "Delivered", at: at(2042, 31), statusCode: 202 } }])
          yield* outbox.recordAll([])
          assert.strictEqual((yield* outbox.get(c.id))?.status, "delivered")
          assert.strictEqual((yield* outbox.get(c.id))?.attempts, 2)
          assert.deepStrictEqual(yield* outbox.pending(10), [])
        })
      )

      it.effect("never hands one event to two concurrent claimers", () =>
        Effect.gen(function* () {
          const outbox = yield* ProducerOutbox
          yield* drain
          const events = Array.from({ length: 40 }, (_, i) => eventFor(`user${i}@example.com`))
          for (const e of events) yield* outbox.enqueue(e)
          const claims = yield* Effect.all(
            Array.from({ length: 8 }, () => outbox.claimDue(at(2050), at(2050, 5), 7)),
            { concurrency: "unbounded" }
          )
          const claimedIds = claims.flatMap(ids)
          assert.strictEqual(new Set(claimedIds).size, claimedIds.length)
          assert.deepStrictEqual([...claimedIds].sort(), events.map((e) => e.id).sort())
          yield* drain
        })
      )
    }))
