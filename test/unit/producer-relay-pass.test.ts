import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Ref, Scope } from "effect"
import { TestClock } from "effect/testing"
import { ProducerOutboxMemory } from "../../adapters/memory/ProducerOutboxMemory.ts"
import { relayConcurrency } from "../../apps/server/ProducerRelayRuntime.ts"
import { HubEventPublisher } from "../../core/events/HubEventPublisher.ts"
import { ProducerOutbox, type ProducerEvent } from "../../core/events/ProducerOutbox.ts"
import { ProducerRelay } from "../../core/events/ProducerRelay.ts"

const event = (n: number): ProducerEvent => ({
  id: `01J0000000000000000000${String(n).padStart(4, "0")}`,
  type: "acme.notification.created",
  service: "acme",
  occurredAt: "2026-01-01T00:00:00.000Z",
  subject: { email: "ada@example.com" },
  data: { title: `Event ${n}` },
  contractVersion: "v1"
})

/** Relays one pass of `count` events; answers how many the publisher held at once, at most. */
const mostAtOnce = (count: number, concurrency: number) =>
  Effect.gen(function* () {
    const inFlight = yield* Ref.make(0)
    const most = yield* Ref.make(0)
    const publisher = Layer.succeed(HubEventPublisher)({
      publish: () =>
        Effect.gen(function* () {
          const now = yield* Ref.updateAndGet(inFlight, (n) => n + 1)
          yield* Ref.update(most, (m) => Math.max(m, now))
          // The hub's ingest gives way while it waits for the statement its concurrent deliveries share.
          for (let i = 0; i < 3; i++) yield* Effect.yieldNow
          yield* Ref.update(inFlight, (n) => n - 1)
          return { status: 202 }
        })
    })
    const relayed = yield* Effect.gen(function* () {
      const outbox = yield* ProducerOutbox
      for (let n = 0; n < count; n++) yield* outbox.enqueue(event(n))
      return yield* ProducerRelay.use((relay) => relay.relayDue(50))
    }).pipe(
      Effect.provide(
        ProducerRelay.layer({ concurrency }).pipe(Layer.provideMerge(Layer.merge(ProducerOutboxMemory, publisher)))
      )
    )
    assert.strictEqual(relayed, count)
    return yield* Ref.get(most)
  })

describe("a relay pass", () => {
  it.effect("hands a pass's events to the hub in the same process all at once, and over HTTP four at a time", () =>
    Effect.gen(function* () {
      assert.strictEqual(yield* mostAtOnce(30, relayConcurrency(true)), 30)
      assert.strictEqual(yield* mostAtOnce(30, relayConcurrency(false)), 4)
    })
  )
})

/**
 * `body` with a relay (`config`) over the memory outbox, whose claims are counted (how many rows each answered),
 * and a hub that acknowledges every event and keeps the ids it was sent.
 */
const withCountingRelay = <A, E>(
  config: Parameters<typeof ProducerRelay.layer>[0],
  body: (counted: {
    readonly claimCalls: Ref.Ref<ReadonlyArray<number>>
    readonly sent: Ref.Ref<ReadonlyArray<string>>
  }) => Effect.Effect<A, E, ProducerOutbox | ProducerRelay | Scope.Scope>
) =>
  Effect.gen(function* () {
    const claimCalls = yield* Ref.make<ReadonlyArray<number>>([])
    const sent = yield* Ref.make<ReadonlyArray<string>>([])
    const publisher = Layer.succeed(HubEventPublisher)({
      publish: (e) =>
        Effect.as(
          Ref.update(sent, (ids) => [...ids, e.id]),
          { status: 202 }
        )
    })
    const counting = Layer.effect(ProducerOutbox)(
      Effect.map(Effect.service(ProducerOutbox), (outbox) =>
        ProducerOutbox.of({
          ...outbox,
          claimDue: (nowIso, leaseUntilIso, limit) =>
            Effect.tap(outbox.claimDue(nowIso, leaseUntilIso, limit), (rows) =>
              Ref.update(claimCalls, (calls) => [...calls, rows.length])
            )
        })
      )
    ).pipe(Layer.provide(ProducerOutboxMemory))
    return yield* body({ claimCalls, sent }).pipe(
      Effect.scoped,
      Effect.provide(ProducerRelay.layer(config).pipe(Layer.provideMerge(Layer.merge(counting, publisher))))
    )
  })

describe("a relay pass with hand-overs", () => {
  it.effect("sends what was handed over without claiming it, claims only the rest, and no more than a batch", () =>
    withCountingRelay({ concurrency: 1 }, ({ claimCalls, sent }) =>
      Effect.gen(function* () {
        const outbox = yield* ProducerOutbox
        const relay = yield* ProducerRelay
        // Enqueued before the relay took hand-overs: due at once, for a claim.
        yield* outbox.enqueue(event(1))
        yield* outbox.enqueue(event(2))
        yield* outbox.openHandOver(60_000)
        for (const n of [3, 4, 5]) yield* outbox.enqueue(event(n))
        // A batch of two: both handed over, no claim at all.
        assert.strictEqual(yield* relay.relayDue(2), 2)
        assert.deepStrictEqual(yield* Ref.get(claimCalls), [])
        // The third handed over, then a claim for the rest of the batch: the two enqueued before.
        assert.strictEqual(yield* relay.relayDue(50), 3)
        assert.deepStrictEqual(yield* Ref.get(claimCalls), [2])
        assert.deepStrictEqual(
          yield* Ref.get(sent),
          [3, 4, 5, 1, 2].map((n) => event(n).id)
        )
        for (const n of [1, 2, 3, 4, 5]) assert.strictEqual((yield* outbox.get(event(n).id))?.status, "delivered")
        assert.strictEqual(yield* relay.relayDue(50), 0)
      })
    )
  )

  it.effect("claims with hand-overs only once the interval has passed, and always in a pass with none", () =>
    withCountingRelay({ concurrency: 1, claimEveryMillis: 1000 }, ({ claimCalls, sent }) =>
      Effect.gen(function* () {
        const outbox = yield* ProducerOutbox
        const relay = yield* ProducerRelay
        yield* outbox.openHandOver(60_000)
        // Handed over to a relay that died with it in memory: held for its lease.
        yield* outbox.enqueue(event(1))
        assert.strictEqual((yield* outbox.takeHandedOver(10)).length, 1)
        yield* outbox.enqueue(event(2))
        // The first pass claims (nothing is due: the lost one is held), the next within the second does not.
        assert.strictEqual(yield* relay.relayDue(50), 1)
        yield* outbox.enqueue(event(3))
        yield* TestClock.adjust(999)
        assert.strictEqual(yield* relay.relayDue(50), 1)
        assert.deepStrictEqual(yield* Ref.get(claimCalls), [0])
        // Once the lost one's lease has passed, the next pass with hand-overs claims it too.
        yield* TestClock.adjust(60_000)
        yield* outbox.enqueue(event(4))
        assert.strictEqual(yield* relay.relayDue(50), 2)
        assert.deepStrictEqual(yield* Ref.get(claimCalls), [0, 1])
        // A pass with nothing handed over always claims.
        assert.strictEqual(yield* relay.relayDue(50), 0)
        assert.deepStrictEqual(yield* Ref.get(claimCalls), [0, 1, 0])
        assert.deepStrictEqual(
          yield* Ref.get(sent),
          [2, 3, 4, 1].map((n) => event(n).id)
        )
      })
    )
  )

  it.effect("gives what it was handed and had not taken back to the outbox when it stops", () =>
    withCountingRelay({ concurrency: 1 }, ({ claimCalls }) =>
      Effect.gen(function* () {
        const outbox = yield* ProducerOutbox
        const relay = yield* ProducerRelay
        const running = yield* Scope.make()
        yield* outbox.openHandOver(60_000).pipe(Scope.provide(running))
        yield* outbox.enqueue(event(1))
        assert.isDefined((yield* outbox.get(event(1).id))?.nextAttemptAt)
        yield* Scope.close(running, Exit.void)
        // Due at once again: the next relay (another server's, or this one's after a restart) claims it.
        assert.deepStrictEqual(yield* outbox.get(event(1).id), { event: event(1), status: "pending", attempts: 0 })
        assert.strictEqual(yield* relay.relayDue(50), 1)
        assert.deepStrictEqual(yield* Ref.get(claimCalls), [1])
      })
    )
  )
})
