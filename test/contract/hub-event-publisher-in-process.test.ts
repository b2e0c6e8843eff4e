import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { monotonicFactory } from "ulid"
import { HubEventPublisherInProcess } from "../../adapters/http/HubEventPublisherInProcess.ts"
import { HubEventPublisher } from "../../core/events/HubEventPublisher.ts"
import type { ProducerEvent } from "../../core/events/ProducerOutbox.ts"
import { EventCatalog } from "../../core/hub/EventCatalog.ts"
import { EventStore } from "../../core/hub/EventStore.ts"
import { notificationDataSchema } from "../../core/hub/FirstPartyCatalog.ts"
import { hubEventsStack, registerProducer } from "../support/HubEvents.ts"

const nextId = monotonicFactory()

const event = (fields: Partial<ProducerEvent> = {}): ProducerEvent => ({
  id: nextId(),
  type: "acme.notification.created",
  service: "acme",
  occurredAt: new Date().toISOString(),
  subject: { email: "ada@example.com" },
  data: { title: "Your report is ready" },
  contractVersion: "v1",
  ...fields
})

/** Publishes through the in-process publisher signed with `key`, on the hub of the runtime. */
const publishWith = (key: string, published: ProducerEvent) =>
  Effect.gen(function* () {
    const publisher = yield* Layer.build(HubEventPublisherInProcess({ signingKey: Redacted.make(key) }))
    return yield* HubEventPublisher.use((p) => p.publish(published)).pipe(Effect.provide(publisher))
  }).pipe(Effect.scoped)

describe("HubEventPublisherInProcess: the hub's ingest in the same process, answered as its route answers", () => {
  let runtime: ManagedRuntime.ManagedRuntime<any, any>
  let acmeKey: string
  beforeAll(async () => {
    runtime = ManagedRuntime.make(hubEventsStack({ quota: { limit: 3, windowMillis: 60_000 } }))
    acmeKey = await runtime.runPromise(
      Effect.gen(function* () {
        const key = yield* registerProducer("acme")
        yield* (yield* EventCatalog).add({
          type: "acme.notification.created",
          producer: "acme",
          isNotification: true,
          dataSchema: notificationDataSchema
        })
        return key
      })
    )
  })
  afterAll(() => runtime.dispose())

  it("stores a new event (202), answers its repeat as a duplicate (200), and refuses what the route refuses", async () => {
    const first = event()
    const answers = await runtime.runPromise(
      Effect.gen(function* () {
        const accepted = yield* publishWith(acmeKey, first)
        const stored = yield* (yield* EventStore).find("acme", first.id)
        const repeated = yield* publishWith(acmeKey, first)
        // Signed with a key that is not the producer's: the signature check still runs in process.
        const forged = yield* publishWith("not-the-producers-key", event())
        const unknownType = yield* publishWith(acmeKey, event({ type: "acme.nothing.known" }))
        // The quota (three a minute here) was taken by the three accepted or checked deliveries above.
        const overQuota = yield* publishWith(acmeKey, event())
        return { accepted, stored, repeated, forged, unknownType, overQuota }
      })
    )
    assert.strictEqual(answers.accepted.status, 202)
    assert.strictEqual(answers.stored?.id, first.id)
    assert.strictEqual(answers.stored?.type, first.type)
    assert.strictEqual(answers.repeated.status, 200)
    assert.strictEqual(answers.forged.status, 401)
    assert.strictEqual(answers.unknownType.status, 400)
    assert.strictEqual(answers.overQuota.status, 429)
    assert.isTrue(Number(answers.overQuota.retryAfter) > 0)
  })
})
