import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { randomUUID } from "node:crypto"
import { monotonicFactory } from "ulid"
import { CatalogStore, type CatalogEntryInput } from "../../core/hub/CatalogStore.ts"
import { EmailQueue, type EmailBatch } from "../../core/hub/EmailQueue.ts"
import { EventStore, type NewEvent } from "../../core/hub/EventStore.ts"
import { NotificationStore, type Notification } from "../../core/hub/NotificationStore.ts"

export type HubEventStores = EventStore | CatalogStore | NotificationStore | EmailQueue

const nextId = monotonicFactory()
const at = (year: number, seconds = 0) => new Date(Date.UTC(year, 0, 1) + seconds * 1000).toISOString()
const freshService = () => `svc${randomUUID().replace(/-/g, "").slice(0, 12)}`

const eventOf = (service: string, fields: Partial<NewEvent> = {}): NewEvent => ({
  service,
  id: nextId(),
  type: `${service}.notification.created`,
  occurredAt: "2026-01-31T12:00:00+01:00",
  subject: { email: "ada@example.com", companyId: "org_1" },
  data: { title: "Hello", nested: { list: [1, 2.5, "x", null, true] } },
  deliveryId: `dlv_${randomUUID()}`,
  receivedAt: at(2040),
  ...fields
})

const notificationOf = (userId: string, fields: Partial<Notification> = {}): Notification => ({
  id: nextId(),
  userId,
  email: `${userId}@example.com`,
  service: "tasks",
  eventId: nextId(),
  type: "tasks.notification.created",
  title: "A task for you",
  body: null,
  url: "/tasks/1",
  category: null,
  createdAt: at(2040),
  ...fields
})

/** The four stores of event ingest and notifications, against one adapter family. */
export const HubEventStoresContract = (name: string, stores: Layer.Layer<HubEventStores, unknown>) => {
  layer(stores, { timeout: "60 seconds" })(`hub event stores (${name})`, (it) => {
    describe("EventStore", () => {
      it.effect("stores an event once: new, then duplicate, and reads it back as stored", () =>
        Effect.gen(function* () {
          const store = yield* EventStore
          const event = eventOf(freshService())
          assert.strictEqual(yield* store.insert(event), "new")
          assert.strictEqual(yield* store.insert({ ...event, deliveryId: "another attempt" }), "duplicate")
          const found = yield* store.find(event.service, event.id)
          assert.deepStrictEqual(found, { ...event, status: "accepted", attempts: 0, processedAt: null })
          assert.strictEqual(yield* store.find(event.service, nextId()), undefined)
          // The same id from another producer is another event.
          assert.strictEqual(yield* store.insert({ ...event, service: freshService() }), "new")
        })
      )

      it.effect("1,000 concurrent inserts with 20% duplicates store each event exactly once", () =>
        Effect.gen(function* () {
          const store = yield* EventStore
          const service = freshService()
          const unique = Array.from({ length: 800 }, (_, i) => eventOf(service, { receivedAt: at(2041, i) }))
          const deliveries = [...unique, ...unique.slice(0, 200)]
          const outcomes = yield* Effect.forEach(deliveries, (event) => store.insert(event), {
            concurrency: "unbounded"
          })
          assert.strictEqual(outcomes.filter((o) => o === "new").length, 800)
          assert.strictEqual(outcomes.filter((o) => o === "duplicate").length, 200)
          const stored = yield* store.list(service, 2000)
          assert.strictEqual(stored.length, 800)
          assert.strictEqual(new Set(stored.map((e) => e.id)).size, 800)
          // Newest received first.
          assert.strictEqual(stored[0]!.receivedAt, at(2041, 799))
        })
      )

      it.effect("claims accepted events oldest first with a lease, again after the lease, never once finished", () =>
        Effect.gen(function* () {
          const store = yield* EventStore
          const service = freshService()
          // Received long before anything else in this suite, so they are the oldest claimable rows.
          const events = [0, 1, 2].map((i) => eventOf(service, { receivedAt: at(2001, i) }))
          for (const event of events) yield* store.insert(event)
          const mine = (claimed: ReadonlyArray<{ readonly service: string; readonly id: string }>) =>
            claimed.filter((e) => e.service === service).map((e) => e.id)

          const first = yield* store.claim(at(2030), at(2030, 60), 2)
          assert.deepStrictEqual(mine(first), [events[0]!.id, events[1]!.id])
          assert.deepStrictEqual(
            first.map((e) => e.attempts),
            [1, 1]
          )
          // Leased: a second processor takes the next one only.
          assert.deepStrictEqual(mine(yield* store.claim(at(2030, 1), at(2030, 61), 1)), [events[2]!.id])
          yield* store.finish(service, events[0]!.id, "processed", at(2030, 2))
          // After the lease the unfinished one is claimed again (a processor died), the finished never.
          const again = yield* store.claim(at(2030, 61), at(2030, 120), 2)
          assert.deepStrictEqual(mine(again), [events[1]!.id, events[2]!.id])
          assert.deepStrictEqual(
            again.map((e) => e.attempts),
            [2, 2]
          )
          const done = yield* store.find(service, events[0]!.id)
          assert.strictEqual(done?.status, "processed")
          assert.strictEqual(done?.processedAt, at(2030, 2))
          yield* store.finish(service, events[1]!.id, "failed", at(2030, 121))
          yield* store.finish(service, events[2]!.id, "processed", at(2030, 121))
          assert.deepStrictEqual(mine(yield* store.claim(at(2031), at(2031, 60), 1000)), [])
        })
      )

      it.effect("concurrent claims never hand out the same event", () =>
        Effect.gen(function* () {
          const store = yield* EventStore
          const service = freshService()
          for (let i = 0; i < 20; i++) yield* store.insert(eventOf(service, { receivedAt: at(2002, i) }))
          const claims = yield* Effect.forEach([0, 1, 2, 3, 4], () => store.claim(at(2032), at(2032, 60), 4), {
            concurrency: "unbounded"
          })
          const ids = claims
            .flat()
            .filter((e) => e.service === service)
            .map((e) => e.id)
          assert.strictEqual(new Set(ids).size, ids.length)
          // A claim may skip rows another holds and take newer ones instead; the rest are claimable later.
          const rest = (yield* store.claim(at(2032, 1), at(2032, 61), 5000)).filter((e) => e.service === service)
          const all = [...ids, ...rest.map((e) => e.id)]
          assert.strictEqual(new Set(all).size, 20)
          assert.strictEqual(all.length, 20)
        })
      )
    })

    describe("CatalogStore", () => {
      const entry = (type: string, producer: string): CatalogEntryInput => ({
        type,
        producer,
        isNotification: true,
        dataSchema: { type: "object", required: ["title"], properties: { title: { type: "string" } } },
        updatedAt: at(2040)
      })

      it.effect("upserts by type, bumping the version, and lists by producer ordered by type", () =>
        Effect.gen(function* () {
          const store = yield* CatalogStore
          const producer = freshService()
          const first = yield* store.upsert(entry(`${producer}.b.created`, producer))
          assert.deepStrictEqual(first, { ...entry(`${producer}.b.created`, producer), version: 1 })
          const replaced = yield* store.upsert({ ...entry(`${producer}.b.created`, producer), isNotification: false })
          assert.strictEqual(replaced.version, 2)
          assert.strictEqual(replaced.isNotification, false)
          yield* store.upsert(entry(`${producer}.a.created`, producer))
          assert.deepStrictEqual(
            (yield* store.list(producer)).map((e) => [e.type, e.version]),
            [
              [`${producer}.a.created`, 1],
              [`${producer}.b.created`, 2]
            ]
          )
          assert.deepStrictEqual(yield* store.find(`${producer}.b.created`), replaced)
          assert.strictEqual(yield* store.find(`${producer}.c.created`), undefined)
          assert.deepStrictEqual(yield* store.list(freshService()), [])
          const all = (yield* store.list()).map((e) => e.type)
          assert.isTrue(all.includes(`${producer}.a.created`))
          assert.deepStrictEqual(all, [...all].sort())
        })
      )

      it.effect("insertIfAbsent adds a missing type and leaves a stored one as it is", () =>
        Effect.gen(function* () {
          const store = yield* CatalogStore
          const producer = freshService()
          assert.isTrue(yield* store.insertIfAbsent(entry(`${producer}.x.done`, producer)))
          assert.isFalse(
            yield* store.insertIfAbsent({ ...entry(`${producer}.x.done`, producer), isNotification: false })
          )
          const stored = yield* store.find(`${producer}.x.done`)
          assert.strictEqual(stored?.isNotification, true)
          assert.strictEqual(stored?.version, 1)
        })
      )
    })

    describe("NotificationStore", () => {
      it.effect("files a notification once per event and lists the user's feed newest first", () =>
        Effect.gen(function* () {
          const store = yield* NotificationStore
          const userId = `usr_${randomUUID()}`
          const first = notificationOf(userId, { createdAt: at(2040, 1), body: "b", category: "c" })
          assert.deepStrictEqual(yield* store.file(first), { notification: first, filed: true })
          // The same event again (a processor that crashed after filing): the first one is answered.
          const again = yield* store.file({ ...first, id: nextId(), title: "other" })
          assert.deepStrictEqual(again, { notification: first, filed: false })
          const second = notificationOf(userId, { createdAt: at(2040, 2) })
          yield* store.file(second)
          yield* store.file(notificationOf(`usr_${randomUUID()}`))
          assert.deepStrictEqual(yield* store.feed(userId, 10), [second, first])
          assert.deepStrictEqual(yield* store.feed(userId, 1), [second])
        })
      )
    })

    describe("EmailQueue", () => {
      it.effect("queues once, claims one batch per user with a lease, and marks items sent", () =>
        Effect.gen(function* () {
          const queue = yield* EmailQueue
          const ada = `usr_a_${randomUUID()}`
          const bob = `usr_b_${randomUUID()}`
          const a1 = notificationOf(ada, { createdAt: at(2003, 1) })
          const a2 = notificationOf(ada, { createdAt: at(2003, 3) })
          const b1 = notificationOf(bob, { createdAt: at(2003, 2) })
          assert.isTrue(yield* queue.enqueue(a1))
          assert.isFalse(yield* queue.enqueue(a1))
          yield* queue.enqueue(b1)
          yield* queue.enqueue(a2)
          assert.deepStrictEqual(yield* queue.pending(ada), [a1, a2])

          const mine = (batches: ReadonlyArray<EmailBatch>) =>
            batches.filter((b) => b.userId === ada || b.userId === bob)
          const batches = mine(yield* queue.claim(at(2033), at(2033, 60), 100))
          assert.deepStrictEqual(batches, [
            { userId: ada, email: a1.email, items: [a1, a2] },
            { userId: bob, email: b1.email, items: [b1] }
          ])
          // Leased: nothing to claim until the lease passes.
          assert.deepStrictEqual(mine(yield* queue.claim(at(2033, 1), at(2033, 61), 100)), [])
          yield* queue.markSent([a1.id, a2.id], at(2033, 2))
          assert.deepStrictEqual(yield* queue.pending(ada), [])
          // Bob's batcher died before marking: after the lease his item is claimed again, Ada's never.
          assert.deepStrictEqual(mine(yield* queue.claim(at(2033, 60), at(2033, 120), 100)), [
            { userId: bob, email: b1.email, items: [b1] }
          ])
          yield* queue.markSent([b1.id], at(2033, 61))
          assert.deepStrictEqual(mine(yield* queue.claim(at(2034), at(2034, 60), 100)), [])
        })
      )

      it.effect("concurrent claims never hand out the same notification twice", () =>
        Effect.gen(function* () {
          const queue = yield* EmailQueue
          const prefix = `usr_c_${randomUUID()}`
          const users = Array.from({ length: 40 }, (_, i) => `${prefix}_${String(i).padStart(2, "0")}`)
          const queued = users.flatMap((userId, i) =>
            [0, 1, 2].map((k) => notificationOf(userId, { createdAt: at(2004, i * 3 + k) }))
          )
          yield* Effect.forEach(queued, (n) => queue.enqueue(n), { discard: true })
          const mine = (batches: ReadonlyArray<EmailBatch>) => batches.filter((b) => b.userId.startsWith(prefix))
          // Several batchers at once, round after round, each lease passing before the next round.
          const handedOut: Array<string> = []
          for (let round = 0; round < 12 && handedOut.length < queued.length; round++) {
            const claims = yield* Effect.forEach(
              Array.from({ length: 12 }),
              () => queue.claim(at(2035, round * 100), at(2035, round * 100 + 60), 3),
              { concurrency: "unbounded" }
            )
            const ids = claims.flatMap((batches) => mine(batches).flatMap((b) => b.items.map((item) => item.id)))
            yield* queue.markSent(ids, at(2035, round * 100 + 1))
            handedOut.push(...ids)
          }
          assert.strictEqual(new Set(handedOut).size, handedOut.length)
        })
      )
    })
  })
}
