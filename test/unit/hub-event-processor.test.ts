import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Exit, Layer, Ref, Scope } from "effect"
import { TestClock } from "effect/testing"
import { monotonicFactory } from "ulid"
import { dataSchemaProblem, EventCatalog, isLinearPattern } from "../../core/hub/EventCatalog.ts"
import { deliveriesFor, EventProcessor } from "../../core/hub/EventProcessor.ts"
import { notificationContent } from "../../core/hub/NotificationContent.ts"
import { EventHandOver } from "../../core/hub/EventHandOver.ts"
import { handOverLeaseMillis, makeHandOver } from "../../core/kernel/HandOver.ts"
import { EventIngest } from "../../core/hub/EventIngest.ts"
import { EventStore, type NewEvent, type StoredEvent } from "../../core/hub/EventStore.ts"
import { EventWakeup } from "../../core/hub/EventWakeup.ts"
import { EventStoreMemory } from "../../adapters/memory/hub/EventStoreMemory.ts"
import { DeliveryStore } from "../../core/hub/Deliveries.ts"
import { DeliveryWakeup } from "../../core/hub/DeliveryWakeup.ts"
import { defaultPreferences, Directory } from "../../core/hub/Directory.ts"
import {
  firstPartyUrlPattern,
  notificationDataSchema,
  seedFirstPartyCatalog,
  settlementDataSchema
} from "../../core/hub/FirstPartyCatalog.ts"
import { NotificationStore } from "../../core/hub/NotificationStore.ts"
import { OrgChatWebhookStore } from "../../core/hub/OrgChatWebhooks.ts"
import { Registry } from "../../core/hub/Registry.ts"
import { hubEventsStack, registerProducer, signedDelivery } from "../support/HubEvents.ts"

const ulid = monotonicFactory()

const event = (fields: Partial<NewEvent> = {}): NewEvent => ({
  service: "acme",
  id: ulid(),
  type: "acme.notification.created",
  occurredAt: "2026-01-01T00:00:00Z",
  subject: { email: "ada@example.com" },
  data: { title: "Report ready" },
  deliveryId: "dlv_1",
  receivedAt: new Date(0).toISOString(),
  ...fields
})

const setUp = Effect.gen(function* () {
  const signingKey = yield* registerProducer("acme")
  yield* EventCatalog.use((c) =>
    c.add({
      type: "acme.notification.created",
      producer: "acme",
      isNotification: true,
      dataSchema: notificationDataSchema
    })
  )
  yield* EventCatalog.use((c) =>
    c.add({ type: "acme.thing.happened", producer: "acme", dataSchema: { type: "object" } })
  )
  yield* Directory.use((d) =>
    d.createUser({
      id: "usr_ada",
      email: "ada@example.com",
      name: "Ada",
      verified: true,
      createdAt: "2026-01-01T00:00:00Z"
    })
  )
  return signingKey
})

const stack: Layer.Layer<any, unknown> = hubEventsStack({ processor: { leaseMillis: 60_000, maxAttempts: 3 } })

describe("EventProcessor", () => {
  it.effect("a processor that died mid-event leaves it to be claimed after the lease, and the feed gets it once", () =>
    Effect.gen(function* () {
      yield* setUp
      const store = yield* EventStore
      const processor = yield* EventProcessor
      const notifications = yield* NotificationStore
      const e = event()
      yield* store.insert(e)
      // A first processor claims the event, files the notification and queues its email in one unit of
      // work, then dies before finishing.
      const [claimed] = yield* store.claim(new Date(0).toISOString(), new Date(60_000).toISOString(), 10)
      assert.strictEqual(claimed?.id, e.id)
      const { notification } = yield* notifications.file({
        id: ulid(),
        userId: "usr_ada",
        email: "ada@example.com",
        service: "acme",
        eventId: e.id,
        type: e.type,
        ...notificationContent(e.type, e.data),
        createdAt: new Date(0).toISOString(),
        readAt: null
      })
      yield* DeliveryStore.use((d) => d.enqueue(deliveriesFor(notification, defaultPreferences, [], 60_000)))
      // Within the lease nobody else takes it.
      assert.strictEqual(yield* processor.runDue(), 0)
      yield* TestClock.adjust(60_000)
      assert.strictEqual(yield* processor.runDue(), 1)
      assert.strictEqual((yield* store.find("acme", e.id))?.status, "processed")
      assert.strictEqual((yield* notifications.feed("usr_ada", 10)).length, 1)
      // The retry found it filed and queued nothing more: one email, waiting for the digest.
      const queued = yield* DeliveryStore.use((d) => d.forUser("usr_ada", 10))
      assert.deepStrictEqual(
        queued.map((d) => [d.id, d.status, d.nextAttemptAt]),
        [[`${notification.id}/email`, "pending", new Date(60_000).toISOString()]]
      )
    }).pipe(Effect.provide(stack))
  )

  it.effect(
    "a type that is not a notification, or a subject unknown to the hub, is processed without a feed entry",
    () =>
      Effect.gen(function* () {
        yield* setUp
        const store = yield* EventStore
        const plain = event({ type: "acme.thing.happened", data: {} })
        const stranger = event({ subject: { email: "nobody@example.com" } })
        yield* store.insert(plain)
        yield* store.insert(stranger)
        assert.strictEqual(yield* EventProcessor.use((p) => p.runDue()), 2)
        for (const e of [plain, stranger]) assert.strictEqual((yield* store.find("acme", e.id))?.status, "processed")
        assert.deepStrictEqual(yield* NotificationStore.use((n) => n.feed("usr_ada", 10)), [])
      }).pipe(Effect.provide(stack))
  )

  it.effect("an event whose processing keeps failing is retried after each lease, then marked failed", () =>
    Effect.gen(function* () {
      yield* setUp
      const store = yield* EventStore
      const broken = event()
      yield* store.insert(broken)
      // The directory is down: every attempt fails until the processor gives up.
      const directory = yield* Directory
      const down = Layer.succeed(Directory)({ ...directory, recipients: () => Effect.die(new Error("down")) })
      const processor = yield* EventProcessor.use(Effect.succeed).pipe(
        Effect.provide(EventProcessor.layer({ leaseMillis: 1000, maxAttempts: 3 }).pipe(Layer.provide(down)))
      )
      for (let attempt = 1; attempt <= 3; attempt++) {
        assert.strictEqual(yield* processor.runDue(), 1)
        yield* TestClock.adjust(1000)
      }
      assert.strictEqual((yield* store.find("acme", broken.id))?.status, "failed")
      assert.strictEqual(yield* processor.runDue(), 0)
    }).pipe(Effect.provide(stack))
  )

  it.effect("wakes the channels' sender only once it queued a delivery due at once, not for a digest's email", () =>
    Effect.gen(function* () {
      yield* setUp
      const store = yield* EventStore
      const wakes = yield* Ref.make(0)
      const counting = Layer.succeed(DeliveryWakeup)({
        wake: Ref.update(wakes, (n) => n + 1),
        sleep: () => Effect.void
      })
      const processor = yield* EventProcessor.use(Effect.succeed).pipe(
        Effect.provide(EventProcessor.layer({ emailBatchMillis: 60_000 }).pipe(Layer.provide(counting)))
      )
      // Ada takes her email as a digest (the default): it is due in a minute, so nothing is woken now.
      yield* store.insert(event())
      assert.strictEqual(yield* processor.runDue(), 1)
      assert.strictEqual(yield* Ref.get(wakes), 0)
      // Her email at once: due now, and the sender is woken once the batch has committed.
      yield* Directory.use((d) =>
        d.savePreferences("usr_ada", { serviceVisible: {}, channels: ["bell", "email"], emailMode: "immediate" })
      )
      yield* store.insert(event())
      yield* store.insert(event())
      assert.strictEqual(yield* processor.runDue(), 2)
      assert.strictEqual(yield* Ref.get(wakes), 1)
      const queued = yield* DeliveryStore.use((d) => d.forUser("usr_ada", 10))
      assert.strictEqual(queued.length, 3)
    }).pipe(Effect.provide(stack))
  )

  it.effect("an event whose processor dies every time is given up after the attempt limit, not claimed forever", () =>
    Effect.gen(function* () {
      yield* setUp
      const store = yield* EventStore
      const poison = event()
      yield* store.insert(poison)
      // Three processors claim it and die before finishing (maxAttempts is 3 in this stack).
      for (let attempt = 1; attempt <= 3; attempt++) {
        const now = yield* Clock.currentTimeMillis
        yield* store.claim(new Date(now).toISOString(), new Date(now + 60_000).toISOString(), 10)
        yield* TestClock.adjust(60_000)
      }
      assert.strictEqual(yield* EventProcessor.use((p) => p.runDue()), 1)
      assert.strictEqual((yield* store.find("acme", poison.id))?.status, "failed")
      assert.deepStrictEqual(yield* NotificationStore.use((n) => n.feed("usr_ada", 10)), [])
      yield* TestClock.adjust(60_000)
      assert.strictEqual(yield* EventProcessor.use((p) => p.runDue()), 0)
    }).pipe(Effect.provide(stack))
  )
})

describe("EventProcessor, settling notifications", () => {
  const asking = (email: string, url: string, category = "ask") =>
    event({ subject: { email }, data: { title: "Ship it?", body: "Asks for your decision.", url, category } })
  const settlement = (url: string, categories: ReadonlyArray<string> = ["ask"]) =>
    event({ type: "acme.notification.settled", data: { url, categories, body: "Answered: Yes." } })

  const setUpSettling = Effect.gen(function* () {
    yield* setUp
    yield* EventCatalog.use((c) =>
      c.add({
        type: "acme.notification.settled",
        producer: "acme",
        isNotification: true,
        dataSchema: settlementDataSchema
      })
    )
    yield* Directory.use((d) =>
      d.createUser({
        id: "usr_bob",
        email: "bob@example.com",
        name: "Bob",
        verified: true,
        createdAt: "2026-01-01T00:00:00Z"
      })
    )
  })
  const feedOf = (userId: string) =>
    Effect.map(
      NotificationStore.use((n) => n.feed(userId, 10)),
      (items) => items.map((n) => [n.url, n.category, n.body, n.readAt !== null] as const)
    )

  it.effect("marks every person's notification leading to the url done: read, saying how it ended", () =>
    Effect.gen(function* () {
      yield* setUpSettling
      const store = yield* EventStore
      const processor = yield* EventProcessor
      yield* store.insert(asking("ada@example.com", "/apps/acme/x"))
      yield* store.insert(asking("bob@example.com", "/apps/acme/x"))
      yield* store.insert(asking("bob@example.com", "/apps/acme/x", "fyi"))
      yield* store.insert(asking("ada@example.com", "/apps/acme/other"))
      assert.strictEqual(yield* processor.runDue(), 4)
      const settled = settlement("/apps/acme/x")
      yield* store.insert(settled)
      assert.strictEqual(yield* processor.runDue(), 1)
      assert.strictEqual((yield* store.find("acme", settled.id))?.status, "processed")
      assert.deepStrictEqual(yield* feedOf("usr_ada"), [
        ["/apps/acme/other", "ask", "Asks for your decision.", false],
        ["/apps/acme/x", "ask", "Answered: Yes.", true]
      ])
      // Bob's as well; one of another category is left as it was.
      assert.deepStrictEqual(yield* feedOf("usr_bob"), [
        ["/apps/acme/x", "fyi", "Asks for your decision.", false],
        ["/apps/acme/x", "ask", "Answered: Yes.", true]
      ])
      // Nothing of the settlement itself reaches a feed.
      assert.strictEqual((yield* NotificationStore.use((n) => n.feed("usr_ada", 10))).length, 2)
    }).pipe(Effect.provide(stack))
  )

  it.effect("a notification processed in the same batch as its settlement is filed done, and sent nowhere", () =>
    Effect.gen(function* () {
      yield* setUpSettling
      const store = yield* EventStore
      yield* Directory.use((d) =>
        d.savePreferences("usr_ada", { serviceVisible: {}, channels: ["bell", "email"], emailMode: "immediate" })
      )
      yield* store.insert(asking("ada@example.com", "/apps/acme/y"))
      yield* store.insert(settlement("/apps/acme/y", []))
      assert.strictEqual(yield* EventProcessor.use((p) => p.runDue()), 2)
      assert.deepStrictEqual(yield* feedOf("usr_ada"), [["/apps/acme/y", "ask", "Answered: Yes.", true]])
      assert.deepStrictEqual(yield* DeliveryStore.use((d) => d.forUser("usr_ada", 10)), [])
    }).pipe(Effect.provide(stack))
  )

  it.effect("a settlement reaches only its producer's notifications, and only those leading to one of its paths", () =>
    Effect.gen(function* () {
      yield* setUpSettling
      const store = yield* EventStore
      const processor = yield* EventProcessor
      yield* store.insert(asking("ada@example.com", "/apps/acme/z"))
      yield* store.insert(asking("ada@example.com", "https://acme.example/z"))
      yield* processor.runDue()
      yield* store.insert(event({ service: "other", type: "acme.notification.settled", data: { url: "/apps/acme/z" } }))
      yield* store.insert(settlement("https://acme.example/z", []))
      yield* processor.runDue()
      assert.deepStrictEqual(
        (yield* feedOf("usr_ada")).map(([, , , read]) => read),
        [false, false]
      )
    }).pipe(Effect.provide(stack))
  )
})

describe("EventProcessor, with notifications handed over by ingest", () => {
  /** Ingests a notification for Ada from acme, signed at the test clock's time. */
  const ingest = (signingKey: string) =>
    Effect.gen(function* () {
      const id = ulid()
      const body = JSON.stringify({
        id,
        type: "acme.notification.created",
        service: "acme",
        occurredAt: "2026-01-01T00:00:00Z",
        subject: { email: "ada@example.com" },
        data: { title: "Report ready" },
        contractVersion: "v1"
      })
      const timestamp = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      const outcome = yield* EventIngest.use((i) =>
        i.ingest(signedDelivery({ secret: signingKey, body, timestamp, eventId: id }))
      )
      assert.strictEqual(outcome.status, "accepted")
      return id
    })

  /** The stack's processor over a store that counts its claims and the rows they return. */
  const countingClaims = (claimEveryMillis?: number) =>
    Effect.gen(function* () {
      const store = yield* EventStore
      const claimedRows = yield* Ref.make(0)
      const claims = yield* Ref.make(0)
      const counting = Layer.succeed(EventStore)({
        ...store,
        claim: (nowIso, leaseUntilIso, limit) =>
          Effect.tap(store.claim(nowIso, leaseUntilIso, limit), (rows) =>
            Effect.andThen(
              Ref.update(claimedRows, (n) => n + rows.length),
              Ref.update(claims, (n) => n + 1)
            )
          )
      })
      const processor = yield* EventProcessor.use(Effect.succeed).pipe(
        Effect.provide(
          EventProcessor.layer({ leaseMillis: 60_000, maxAttempts: 3, claimEveryMillis }).pipe(Layer.provide(counting))
        )
      )
      return { processor, claimedRows, claims }
    })

  const progress = (id: string) =>
    Effect.map(
      EventStore.use((store) => store.find("acme", id)),
      (found) => [found?.status, found?.attempts]
    )

  it.effect("while the worker takes them, a notification is stored claimed and filed with no claim of its own", () =>
    Effect.gen(function* () {
      const signingKey = yield* setUp
      yield* EventHandOver.use((handOver) => handOver.open)
      const { processor, claimedRows } = yield* countingClaims()
      const id = yield* ingest(signingKey)
      // Stored claimed by this instance, its first attempt counted: no processor elsewhere takes it meanwhile.
      assert.deepStrictEqual(yield* progress(id), ["accepted", 1])
      assert.strictEqual(yield* processor.runDue(), 1)
      assert.strictEqual(yield* Ref.get(claimedRows), 0)
      assert.deepStrictEqual(yield* progress(id), ["processed", 1])
      assert.strictEqual((yield* NotificationStore.use((n) => n.feed("usr_ada", 10))).length, 1)
    }).pipe(Effect.scoped, Effect.provide(stack))
  )

  it.effect("a hand-over lost with its processor is claimed once its lease has passed, and filed once", () =>
    Effect.gen(function* () {
      const signingKey = yield* setUp
      const handOver = yield* EventHandOver
      yield* handOver.open
      const { processor, claimedRows } = yield* countingClaims()
      const id = yield* ingest(signingKey)
      // The processor it was handed to dies with it in memory. It was stored for a hand-over's lease (10 s),
      // not the processor's own (60 s).
      assert.strictEqual((yield* handOver.take(10)).length, 1)
      assert.strictEqual(yield* processor.runDue(), 0)
      yield* TestClock.adjust(handOverLeaseMillis - 1)
      assert.strictEqual(yield* processor.runDue(), 0)
      yield* TestClock.adjust(1)
      assert.strictEqual(yield* processor.runDue(), 1)
      assert.strictEqual(yield* Ref.get(claimedRows), 1)
      assert.deepStrictEqual(yield* progress(id), ["processed", 2])
      assert.strictEqual((yield* NotificationStore.use((n) => n.feed("usr_ada", 10))).length, 1)
    }).pipe(Effect.scoped, Effect.provide(stack))
  )

  it.effect("while notifications are handed over, the store is asked for others once an interval", () =>
    Effect.gen(function* () {
      const signingKey = yield* setUp
      yield* EventHandOver.use((handOver) => handOver.open)
      const { processor, claims } = yield* countingClaims(1000)
      for (const wait of [0, 999, 1]) {
        yield* TestClock.adjust(wait)
        yield* ingest(signingKey)
        assert.strictEqual(yield* processor.runDue(), 1)
      }
      // The first batch claimed, the second (within the interval) did not, the third (after it) did.
      assert.strictEqual(yield* Ref.get(claims), 2)
      // A batch with nothing handed over always claims.
      assert.strictEqual(yield* processor.runDue(), 0)
      assert.strictEqual(yield* Ref.get(claims), 3)
      assert.strictEqual((yield* NotificationStore.use((n) => n.feed("usr_ada", 10))).length, 3)
    }).pipe(Effect.scoped, Effect.provide(stack))
  )

  it.effect("with no worker taking them, a notification is stored unclaimed for any processor to claim", () =>
    Effect.gen(function* () {
      const signingKey = yield* setUp
      const { processor, claimedRows } = yield* countingClaims()
      const id = yield* ingest(signingKey)
      assert.deepStrictEqual(yield* progress(id), ["accepted", 0])
      assert.strictEqual(yield* processor.runDue(), 1)
      assert.strictEqual(yield* Ref.get(claimedRows), 1)
      assert.deepStrictEqual(yield* progress(id), ["processed", 1])
    }).pipe(Effect.provide(stack))
  )
})

describe("EventHandOver", () => {
  /** Stored claimed, as ingest stores what it hands over, and answered as handed over. */
  const storedClaimed = (id: string) =>
    Effect.gen(function* () {
      const fields = event({ id })
      yield* EventStore.use((store) => store.insert({ ...fields, claimedUntil: new Date(60_000).toISOString() }))
      return { ...fields, status: "accepted", attempts: 1, processedAt: null } satisfies StoredEvent
    })
  const attemptsOf = (id: string) =>
    Effect.map(
      EventStore.use((store) => store.find("acme", id)),
      (e) => e?.attempts
    )

  it.effect(
    "leases only while a worker takes them and fewer than the most wait; hands each over once, oldest first",
    () =>
      Effect.gen(function* () {
        const handOver = yield* EventHandOver
        // Nobody takes them: nothing is leased; one given anyway (its worker stopped meanwhile) goes back.
        assert.strictEqual(handOver.leaseFor(1000), undefined)
        yield* handOver.handOver(yield* storedClaimed("a"))
        assert.strictEqual(yield* attemptsOf("a"), 0)
        const scope = yield* Scope.make()
        yield* handOver.open.pipe(Scope.provide(scope))
        assert.deepStrictEqual(yield* handOver.take(10), [])
        assert.strictEqual(handOver.leaseFor(1000), new Date(6000).toISOString())
        yield* handOver.handOver(yield* storedClaimed("b"))
        yield* handOver.handOver(yield* storedClaimed("c"))
        // Two wait: the next is stored unclaimed, for the processors' claims.
        assert.strictEqual(handOver.leaseFor(1000), undefined)
        assert.deepStrictEqual(
          (yield* handOver.take(1)).map((e) => e.id),
          ["b"]
        )
        assert.strictEqual(handOver.leaseFor(2000), new Date(7000).toISOString())
        yield* handOver.handOver(yield* storedClaimed("d"))
        // The worker stops: what it had not taken goes back to the store, unclaimed, and nothing more is leased.
        yield* Scope.close(scope, Exit.void)
        assert.deepStrictEqual([yield* attemptsOf("b"), yield* attemptsOf("c"), yield* attemptsOf("d")], [1, 0, 0])
        assert.strictEqual(handOver.leaseFor(2000), undefined)
        yield* handOver.open.pipe(Scope.provide(yield* Scope.make()))
        assert.deepStrictEqual(yield* handOver.take(10), [])
        // Given back, they are claimed at once; the one taken before stays held by its lease.
        const claimed = yield* EventStore.use((store) =>
          store.claim(new Date(2000).toISOString(), new Date(62_000).toISOString(), 10)
        )
        assert.deepStrictEqual(
          claimed.map((e) => e.id),
          ["a", "c", "d"]
        )
      }).pipe(
        Effect.provide(
          EventHandOver.layer({ leaseMillis: 5000, maxWaiting: 2 }).pipe(
            Layer.provideMerge(Layer.merge(EventWakeup.layer, EventStoreMemory))
          )
        )
      )
  )
})

describe("a hand-over's lease", () => {
  it.effect("is the worker's own up to 10 s, so a crash delays what it lost by no more than that", () =>
    Effect.gen(function* () {
      const short = makeHandOver<string>({ maxWaiting: 10, release: () => Effect.void })
      const long = makeHandOver<string>({ maxWaiting: 10, release: () => Effect.void })
      yield* short.open(2_000)
      yield* long.open(300_000)
      assert.strictEqual(short.leaseFor(1000), new Date(3000).toISOString())
      assert.strictEqual(long.leaseFor(1000), new Date(1000 + handOverLeaseMillis).toISOString())
      assert.strictEqual(handOverLeaseMillis, 10_000)
    }).pipe(Effect.scoped)
  )
})

describe("EventProcessor, a batch at a time", () => {
  const org = "org_acme"
  const joinAcme = (userId: string) =>
    Directory.use((d) =>
      d.addMember({
        orgId: org,
        userId,
        role: "MEMBER",
        department: null,
        departmentRole: null,
        departments: [],
        roles: [],
        createdAt: "2026-01-01T00:00:00Z"
      })
    )
  const setUpTwo = Effect.gen(function* () {
    yield* setUp
    yield* Directory.use((d) =>
      Effect.gen(function* () {
        yield* d.createOrg({
          id: org,
          name: "Acme",
          tier: "free",
          createdAt: "2026-01-01T00:00:00Z",
          archivedAt: null,
          mergedIntoOrgId: null,
          deletedAt: null
        })
        yield* d.createUser({
          id: "usr_bob",
          email: "bob@example.com",
          name: "Bob",
          verified: true,
          createdAt: "2026-01-01T00:00:00Z"
        })
      })
    )
    yield* joinAcme("usr_ada")
    yield* joinAcme("usr_bob")
    yield* OrgChatWebhookStore.use((s) =>
      s.save({ orgId: org, sealedUrl: "sealed", host: "chat.example", updatedAt: "2026-01-01T00:00:00Z" })
    )
  })

  it.effect(
    "files the batch's notifications together; the organization's channel hears one happening once; all are processed",
    () =>
      Effect.gen(function* () {
        yield* setUpTwo
        const store = yield* EventStore
        // One happening for two holders (the same moment, title and link), another person's, a stranger's, a plain type.
        const happening = { occurredAt: "2026-01-02T00:00:00Z", data: { title: "Approve the budget", url: "/d/1" } }
        const forAda = event({ ...happening, subject: { email: "Ada@Example.com", companyId: org } })
        const forBob = event({ ...happening, subject: { email: "bob@example.com", companyId: org } })
        const another = event({ data: { title: "Report ready" }, subject: { email: "bob@example.com" } })
        const stranger = event({ subject: { email: "nobody@example.com", companyId: org } })
        const plain = event({ type: "acme.thing.happened", data: {} })
        const batch = [forAda, forBob, another, stranger, plain]
        for (const e of batch) yield* store.insert(e)

        assert.strictEqual(yield* EventProcessor.use((p) => p.runDue()), 5)
        for (const e of batch) assert.strictEqual((yield* store.find("acme", e.id))?.status, "processed")
        const feedOf = (userId: string) =>
          Effect.map(
            NotificationStore.use((n) => n.feed(userId, 10)),
            (feed) => feed.map((n) => [n.eventId, n.title]).sort()
          )
        assert.deepStrictEqual(yield* feedOf("usr_ada"), [[forAda.id, "Approve the budget"]])
        assert.deepStrictEqual(
          yield* feedOf("usr_bob"),
          [
            [forBob.id, "Approve the budget"],
            [another.id, "Report ready"]
          ].sort()
        )
        const queued = (userId: string) =>
          Effect.map(
            DeliveryStore.use((d) => d.forUser(userId, 10)),
            (log) => log.map((d) => [d.channel, d.target]).sort()
          )
        // Email for each notification; the organization's row once, logged under the first it was queued for.
        assert.deepStrictEqual(yield* queued("usr_ada"), [
          ["chat", "org:org_acme"],
          ["email", ""]
        ])
        assert.deepStrictEqual(yield* queued("usr_bob"), [
          ["email", ""],
          ["email", ""]
        ])
        // Finished in the same unit: nothing is left to claim.
        assert.strictEqual(yield* EventProcessor.use((p) => p.runDue()), 0)
      }).pipe(Effect.provide(stack))
  )

  it.effect("an event whose processing fails does not hold back the others of its batch", () =>
    Effect.gen(function* () {
      yield* setUpTwo
      const store = yield* EventStore
      const good = event({ subject: { email: "bob@example.com" } })
      const broken = event()
      yield* store.insert(good)
      yield* store.insert(broken)
      // Ada's address cannot be read: the batch fails, then each event is processed alone.
      const directory = yield* Directory
      const flaky = Layer.succeed(Directory)({
        ...directory,
        recipients: (emails) =>
          emails.includes("ada@example.com") ? Effect.die(new Error("down")) : directory.recipients(emails)
      })
      const processor = yield* EventProcessor.use(Effect.succeed).pipe(
        Effect.provide(EventProcessor.layer({ leaseMillis: 1000, maxAttempts: 3 }).pipe(Layer.provide(flaky)))
      )
      assert.strictEqual(yield* processor.runDue(), 2)
      assert.strictEqual((yield* store.find("acme", good.id))?.status, "processed")
      assert.strictEqual((yield* NotificationStore.use((n) => n.feed("usr_bob", 10))).length, 1)
      // The broken one stays claimed, to be tried again after its lease.
      assert.deepStrictEqual(
        [(yield* store.find("acme", broken.id))?.status, (yield* store.find("acme", broken.id))?.attempts],
        ["accepted", 1]
      )
      assert.strictEqual(yield* processor.runDue(), 0)
      yield* TestClock.adjust(1000)
      assert.strictEqual(yield* processor.runDue(), 1)
    }).pipe(Effect.provide(stack))
  )
})

describe("notificationContent", () => {
  it("reads title, body, url and category, with the task inbox's link and reason standing in", () => {
    assert.deepStrictEqual(
      notificationContent("x.notification.created", { title: "T", body: "B", url: "/a", category: "c" }),
      {
        title: "T",
        body: "B",
        url: "/a",
        category: "c"
      }
    )
    assert.deepStrictEqual(
      notificationContent("tasks.notification.created", { title: "T", reason: "R", link: "https://t.example/tasks/1" }),
      { title: "T", body: "R", url: "https://t.example/tasks/1", category: null }
    )
    assert.deepStrictEqual(notificationContent("x.notification.created", null), {
      title: "x.notification.created",
      body: null,
      url: null,
      category: null
    })
  })

  it("keeps workspace paths and http(s) links, and drops any other link", () => {
    const url = (data: Record<string, unknown>) => notificationContent("x.notification.created", data).url
    assert.strictEqual(url({ url: "/inbox?x=1" }), "/inbox?x=1")
    assert.strictEqual(url({ link: "https://tasks.example/tasks/1" }), "https://tasks.example/tasks/1")
    for (const link of [
      "javascript:alert(1)",
      "JavaScript:alert(1)",
      "data:text/html,x",
      "//evil.example/x",
      "/\\evil.example",
      "mailto:a@b.c"
    ]) {
      assert.isNull(url({ link }), link)
      assert.isNull(url({ url: link }), link)
    }
  })

  it("cuts a long title on a character boundary, never leaving half of a surrogate pair", () => {
    // 'x' then emoji: unit 199 is the first half of a pair, so a plain cut at 200 would split it.
    const content = notificationContent("acme.notification.created", { title: `x${"\u{1F600}".repeat(150)}` })
    assert.strictEqual(content.title.length, 199)
    assert.isFalse(/[\ud800-\udbff]$/.test(content.title))
  })
})

/** `tasks` is a platform id: only the server's configuration registers it. */
const registerTasks = Registry.use((registry) =>
  registry.registerFirstParty({ id: "tasks", displayName: "Tasks", baseUrl: "https://tasks.example", credentials: {} })
)

describe("seedFirstPartyCatalog", () => {
  it.effect("skips a type whose producer is not registered, and keeps what an operator changed", () =>
    Effect.gen(function* () {
      yield* registerTasks
      yield* seedFirstPartyCatalog
      assert.deepStrictEqual(
        (yield* EventCatalog.use((c) => c.list())).map((e) => e.type),
        ["tasks.notification.created"]
      )
      yield* EventCatalog.use((c) =>
        c.add({ type: "tasks.notification.created", producer: "tasks", dataSchema: { type: "object" } })
      )
      yield* seedFirstPartyCatalog
      const entry = yield* EventCatalog.use((c) => c.find("tasks.notification.created"))
      assert.deepStrictEqual(entry?.dataSchema, { type: "object" })
      assert.strictEqual(entry?.version, 2)
    }).pipe(Effect.provide(stack))
  )

  it.effect("the task inbox's delegation notification satisfies the seeded tasks schema", () =>
    Effect.gen(function* () {
      yield* registerTasks
      yield* seedFirstPartyCatalog
      const catalog = yield* EventCatalog
      const entry = (yield* catalog.find("tasks.notification.created"))!
      const data = {
        kind: "task_delegated",
        taskId: "rec123",
        title: "Call the supplier",
        from: { email: "ada@example.com", name: null },
        reason: "You know them",
        link: "https://tasks.example/tasks/rec123"
      }
      assert.deepStrictEqual(catalog.checkData(entry, data), [])
      assert.deepStrictEqual(
        catalog.checkData(entry, { ...data, title: "", link: "not a url" }).map((issue) => issue.field),
        ["data.title", "data.link"]
      )
    }).pipe(Effect.provide(stack))
  )
})

describe("catalog schemas and data issues", () => {
  it("patterns run on RE2: look-around and back-references are refused, everything else is linear", () => {
    for (const pattern of ["^/(?![/\\\\])", "^(a)\\1$", "(?<n>a)\\k<n>", "(?<=a)b", "a(?!b)"]) {
      assert.isFalse(isLinearPattern(pattern), pattern)
      assert.isString(dataSchemaProblem({ type: "string", pattern }), pattern)
    }
    for (const pattern of [
      firstPartyUrlPattern,
      "^(a+)+$",
      "(\\w+\\s?)*$",
      "^(a?){25}a{25}$",
      "^(a?)+$",
      "^a*a*a*a*a*b$",
      "^[a-z]+(-[a-z]+)*$",
      "^\\d{4}-\\d{2}$"
    ]) {
      assert.isTrue(isLinearPattern(pattern), pattern)
      assert.isUndefined(dataSchemaProblem({ type: "string", pattern }), pattern)
    }
    assert.isString(dataSchemaProblem({ type: "object", patternProperties: { "(a)\\1": {} } }))
    assert.isString(dataSchemaProblem({ $defs: { a: { type: "string" } }, $ref: "#/$defs/a" }))
    assert.isString(dataSchemaProblem({ type: "array", uniqueItems: true }))
    assert.isUndefined(dataSchemaProblem({ type: "array", uniqueItems: true, maxItems: 100 }))
    assert.isString(
      dataSchemaProblem({ anyOf: Array.from({ length: 40 }, (_, i) => ({ type: "string", pattern: `^x${i}$` })) })
    )
    // Nested thousands deep (an operator's body may be 64 KB of it): refused, not a crash.
    assert.isString(dataSchemaProblem(JSON.parse(`${'{"not":'.repeat(20_000)}{}${"}".repeat(20_000)}`)))
    assert.isUndefined(dataSchemaProblem(notificationDataSchema))
  })

  it.effect("patterns that backtrack exponentially elsewhere check a 64 KB event in one pass", () =>
    Effect.gen(function* () {
      yield* registerProducer("acme")
      const catalog = yield* EventCatalog
      const entry = yield* catalog.add({
        type: "acme.thing.patterned",
        producer: "acme",
        dataSchema: {
          type: "object",
          properties: {
            a: { type: "string", pattern: "^(a?){25}a{25}$" },
            b: { type: "string", pattern: "^(a?)+$" },
            c: { type: "string", pattern: "^a*a*a*a*a*b$" }
          }
        }
      })
      // With a backtracking engine the first alone takes seconds, the others far longer.
      const issues = catalog.checkData(entry, { a: "a".repeat(25), b: `${"a".repeat(20_000)}b`, c: "a".repeat(40_000) })
      assert.deepStrictEqual(
        issues.map((issue) => issue.field),
        ["data.b", "data.c"]
      )
    }).pipe(Effect.provide(stack))
  )

  it.effect("data issues are in the hub's words, name the extra property, and stay bounded", () =>
    Effect.gen(function* () {
      yield* registerProducer("acme")
      const catalog = yield* EventCatalog
      const entry = yield* catalog.add({
        type: "acme.thing.checked",
        producer: "acme",
        dataSchema: {
          type: "object",
          additionalProperties: false,
          properties: { code: { type: "string", pattern: "^[A-Z]{3}$" }, n: { type: "integer", maximum: 9 } }
        }
      })
      const longKey = "k".repeat(5000)
      const issues = catalog.checkData(entry, { code: "abc", n: 10, [longKey]: 1 })
      assert.deepStrictEqual(issues, [
        { in: "body", field: `data.${"k".repeat(194)}…`, message: "is not allowed" },
        { in: "body", field: "data.code", message: "does not match the expected pattern" },
        { in: "body", field: "data.n", message: "must be at most 9" }
      ])
    }).pipe(Effect.provide(stack))
  )
})
