import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { monotonicFactory } from "ulid"
import { ChannelMessages } from "../../adapters/memory/hub/ChannelsMemory.ts"
import { MailerRecordings } from "../../adapters/memory/MailerMemory.ts"
import { DeliveryStore } from "../../core/hub/Deliveries.ts"
import { Directory } from "../../core/hub/Directory.ts"
import { EventCatalog } from "../../core/hub/EventCatalog.ts"
import { EventProcessor } from "../../core/hub/EventProcessor.ts"
import { EventStore } from "../../core/hub/EventStore.ts"
import { notificationDataSchema } from "../../core/hub/FirstPartyCatalog.ts"
import { NotificationDeliveries } from "../../core/hub/NotificationDeliveries.ts"
import { PersonNotifications } from "../../core/hub/PersonNotifications.ts"
import { PushSubscriptionStore } from "../../core/hub/PushSubscriptions.ts"
import { seal } from "../../core/auth/SecretBox.ts"
import { fixedJitter } from "../support/FixedJitter.ts"
import { hubEventsStack, registerProducer, testSecretsKey } from "../support/HubEvents.ts"
import { newPushKeys } from "../support/NotificationPeers.ts"

const ulid = monotonicFactory()

const stack: Layer.Layer<any, unknown> = hubEventsStack({
  processor: { emailBatchMillis: 60_000 },
  deliveryRetrySchedule: [10, 20],
  deliveryLeaseMillis: 30_000
}).pipe(Layer.provideMerge(fixedJitter(0.5)))

const setUp = Effect.gen(function* () {
  yield* registerProducer("acme")
  yield* EventCatalog.use((c) =>
    c.add({
      type: "acme.notification.created",
      producer: "acme",
      isNotification: true,
      dataSchema: notificationDataSchema
    })
  )
  for (const [id, email] of [
    ["usr_ada", "ada@example.com"],
    ["usr_bob", "bob@example.com"]
  ]) {
    yield* Directory.use((d) =>
      d.createUser({ id: id!, email: email!, name: null, verified: true, createdAt: "2026-01-01T00:00:00Z" })
    )
  }
})

/** A notification event for `email`, accepted and processed (filed with its deliveries). */
const notify = (email: string, title: string) =>
  Effect.gen(function* () {
    yield* EventStore.use((s) =>
      s.insert({
        service: "acme",
        id: ulid(),
        type: "acme.notification.created",
        occurredAt: "2026-01-01T00:00:00Z",
        subject: { email },
        data: { title, url: "/apps/acme/home" },
        deliveryId: ulid(),
        receivedAt: new Date(0).toISOString()
      })
    )
    yield* EventProcessor.use((p) => p.runDue())
  })

const run = NotificationDeliveries.use((d) => d.runDue())
const sent = MailerRecordings.use((m) => m.sent())
const log = (userId: string) => DeliveryStore.use((d) => d.forUser(userId, 100))

describe("NotificationDeliveries", () => {
  it.effect("a digest waits its interval, then takes every email that waited for the person: one message", () =>
    Effect.gen(function* () {
      yield* setUp
      yield* notify("ada@example.com", "One")
      yield* TestClock.adjust(30_000)
      yield* notify("ada@example.com", "Two")
      yield* notify("bob@example.com", "Bob's")
      assert.strictEqual(yield* run, 0)
      yield* TestClock.adjust(30_000)
      // Ada's first is due: both of hers go; Bob's is not due yet.
      assert.strictEqual(yield* run, 2)
      assert.deepStrictEqual(
        (yield* sent).map((m) => [m.to, m.subject]),
        [["ada@example.com", "2 new notifications"]]
      )
      assert.include((yield* sent)[0]!.text, "https://hub.example/apps/acme/home")
      yield* TestClock.adjust(30_000)
      assert.strictEqual(yield* run, 1)
      assert.deepStrictEqual(
        (yield* sent).map((m) => [m.to, m.subject]),
        [
          ["ada@example.com", "2 new notifications"],
          ["bob@example.com", "Bob's"]
        ]
      )
      assert.strictEqual(yield* run, 0)
    }).pipe(Effect.provide(stack))
  )

  it.effect(
    "a transient failure is retried on the schedule with its jitter, then failed; a permanent one fails at once",
    () =>
      Effect.gen(function* () {
        yield* setUp
        const mine = yield* PersonNotifications
        yield* mine.updatePreferences("usr_ada", {
          channels: ["chat"],
          chatWebhookUrl: "https://chat.example/hook"
        })
        yield* ChannelMessages.use((c) => c.failWith("transient"))
        yield* notify("ada@example.com", "Flaky")
        assert.strictEqual(yield* run, 1)
        const [first] = yield* log("usr_ada")
        assert.deepStrictEqual([first?.status, first?.attempts], ["pending", 1])
        // 10 s, plus an eighth of it at a jitter of one half (up to a quarter is added).
        assert.strictEqual(first?.nextAttemptAt, new Date(11_250).toISOString())
        assert.strictEqual(yield* run, 0)
        yield* TestClock.adjust(11_249)
        assert.strictEqual(yield* run, 0)
        yield* TestClock.adjust(1)
        assert.strictEqual(yield* run, 1)
        yield* TestClock.adjust(22_500)
        assert.strictEqual(yield* run, 1)
        const [spent] = yield* log("usr_ada")
        assert.deepStrictEqual([spent?.status, spent?.attempts], ["failed", 3])
        yield* ChannelMessages.use((c) => c.failWith("permanent"))
        yield* notify("ada@example.com", "Refused")
        assert.strictEqual(yield* run, 1)
        const [refused] = yield* log("usr_ada")
        assert.deepStrictEqual([refused?.status, refused?.attempts], ["failed", 1])
        assert.deepStrictEqual(yield* ChannelMessages.use((c) => c.sent()), [])
      }).pipe(Effect.provide(stack))
  )

  it.effect(
    "a channel turned off before sending cancels what waited; a claim left by a dead worker is interrupted",
    () =>
      Effect.gen(function* () {
        yield* setUp
        yield* notify("bob@example.com", "Waiting")
        yield* PersonNotifications.use((m) => m.updatePreferences("usr_bob", { channels: ["bell"] }))
        yield* TestClock.adjust(60_000)
        assert.strictEqual(yield* run, 1)
        assert.deepStrictEqual(
          (yield* log("usr_bob")).map((d) => [d.status, d.lastError]),
          [["cancelled", "the person turned this channel off"]]
        )
        assert.deepStrictEqual(yield* sent, [])

        // A worker claims Ada's email and dies before the answer: after the lease it is interrupted, not resent.
        yield* notify("ada@example.com", "In flight")
        yield* TestClock.adjust(60_000)
        const claimed = yield* DeliveryStore.use((d) =>
          d.claimEmail(new Date(120_000).toISOString(), new Date(150_000).toISOString(), 10)
        )
        assert.strictEqual(claimed.length, 1)
        assert.strictEqual(yield* run, 0)
        yield* TestClock.adjust(30_000)
        assert.strictEqual(yield* run, 0)
        assert.deepStrictEqual(
          (yield* log("usr_ada")).map((d) => [d.status, d.attempts]),
          [["interrupted", 1]]
        )
        assert.deepStrictEqual(yield* sent, [])
      }).pipe(Effect.provide(stack))
  )

  it.effect(
    "a person keeps ten browsers for push: the eleventh replaces the oldest; one registered again stays one",
    () =>
      Effect.gen(function* () {
        yield* setUp
        const mine = yield* PersonNotifications
        const keys = newPushKeys().json
        const endpoint = (n: number) => `https://push.example/ada/${n}`
        for (let n = 1; n <= 11; n++) {
          yield* TestClock.adjust(1_000)
          yield* mine.subscribe("usr_ada", { endpoint: endpoint(n), keys })
        }
        const kept = () =>
          Effect.map(
            PushSubscriptionStore.use((s) => s.forUser("usr_ada")),
            (l) => l.map((b) => b.endpoint)
          )
        assert.deepStrictEqual(
          yield* kept(),
          Array.from({ length: 10 }, (_, i) => endpoint(i + 2))
        )
        // The second browser again: still ten, none lost, and it is now the latest registered.
        yield* TestClock.adjust(1_000)
        yield* mine.subscribe("usr_ada", { endpoint: endpoint(2), keys })
        assert.deepStrictEqual(yield* kept(), [...Array.from({ length: 9 }, (_, i) => endpoint(i + 3)), endpoint(2)])
      }).pipe(Effect.provide(stack))
  )

  it.effect("one notification makes at most ten push requests to a person, retries included", () =>
    Effect.gen(function* () {
      yield* setUp
      const mine = yield* PersonNotifications
      yield* mine.updatePreferences("usr_ada", { channels: ["push"] })
      for (let n = 1; n <= 4; n++) {
        yield* mine.subscribe("usr_ada", { endpoint: `https://push.example/ada/${n}`, keys: newPushKeys().json })
      }
      // Four browsers, three attempts each on a two-retry schedule: twelve, were it not for the budget.
      yield* ChannelMessages.use((c) => c.failWith("transient"))
      yield* notify("ada@example.com", "Flaky")
      for (let pass = 0; pass < 5; pass++) {
        yield* run
        yield* TestClock.adjust(60_000)
      }
      const tried = (yield* ChannelMessages.use((c) => c.tried())).filter((m) => m.channel === "push")
      assert.strictEqual(tried.length, 10)
      const pushes = (yield* log("usr_ada")).filter((d) => d.channel === "push")
      assert.deepStrictEqual(
        pushes.map((d) => d.status),
        ["failed", "failed", "failed", "failed"]
      )
      assert.strictEqual(
        pushes.filter((d) => d.lastError === "the notification made as many push requests as one notification may")
          .length,
        2
      )
    }).pipe(Effect.provide(stack))
  )

  it.effect("whatever is stored, one notification is queued for the person's ten latest browsers only", () =>
    Effect.gen(function* () {
      yield* setUp
      yield* PersonNotifications.use((m) => m.updatePreferences("usr_bob", { channels: ["push"] }))
      const endpoint = (n: number) => `https://push.example/bob/${n}`
      // Fourteen kept by a store told to keep more (rows from before the limit, say).
      for (let n = 1; n <= 14; n++) {
        yield* PushSubscriptionStore.use((s) =>
          s.save(
            {
              id: `sub_bob_${String(n).padStart(2, "0")}`,
              userId: "usr_bob",
              endpoint: endpoint(n),
              sealedKeys: seal(testSecretsKey, JSON.stringify(newPushKeys().json)),
              createdAt: new Date(n * 1_000).toISOString()
            },
            100
          )
        )
      }
      yield* notify("bob@example.com", "Hello")
      yield* run
      const tried = (yield* ChannelMessages.use((c) => c.tried())).filter((m) => m.channel === "push")
      assert.deepStrictEqual(
        tried.map((m) => m.to).sort(),
        Array.from({ length: 10 }, (_, i) => endpoint(i + 5)).sort()
      )
    }).pipe(Effect.provide(stack))
  )
})
