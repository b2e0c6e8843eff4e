import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Ref } from "effect"
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
