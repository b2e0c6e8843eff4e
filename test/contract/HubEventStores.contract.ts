import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { randomUUID } from "node:crypto"
import { monotonicFactory } from "ulid"
import { CatalogStore, type CatalogEntryInput } from "../../core/hub/CatalogStore.ts"
import { DeliveryStore, type ClaimedDelivery, type NewDelivery } from "../../core/hub/Deliveries.ts"
import { EventStore, type NewEvent } from "../../core/hub/EventStore.ts"
import { NotificationFiling } from "../../core/hub/NotificationFiling.ts"
import { NotificationStore, type Notification } from "../../core/hub/NotificationStore.ts"
import { OrgChatWebhookStore } from "../../core/hub/OrgChatWebhooks.ts"
import { PushSubscriptionStore, type PushSubscription } from "../../core/hub/PushSubscriptions.ts"

export type HubEventStores =
  | EventStore
  | CatalogStore
  | NotificationStore
  | NotificationFiling
  | DeliveryStore
  | OrgChatWebhookStore
  | PushSubscriptionStore

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
  readAt: null,
  ...fields
})

const deliveryOf = (n: Notification, fields: Partial<NewDelivery> = {}): NewDelivery => ({
  notificationId: n.id,
  userId: n.userId,
  channel: "email",
  target: "",
  nextAttemptAt: n.createdAt,
  createdAt: n.createdAt,
  ...fields
})

const idsOf = (claimed: ReadonlyArray<ClaimedDelivery>) => claimed.map((c) => c.delivery.id)

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

      it.effect("stores an event with nothing left to do as processed at its receipt, never to be claimed", () =>
        Effect.gen(function* () {
          const store = yield* EventStore
          const service = freshService()
          // Received before anything else in this suite, so a claim would take them first.
          const done = eventOf(service, { receivedAt: at(2000), processed: true })
          const waiting = eventOf(service, { receivedAt: at(2000, 1), processed: false })
          // Concurrent, so both go in one batched statement where the adapter batches.
          const outcomes = yield* Effect.all([store.insert(done), store.insert(waiting)], { concurrency: 2 })
          assert.deepStrictEqual(outcomes, ["new", "new"])
          const { processed: _done, ...doneStored } = done
          const { processed: _waiting, ...waitingStored } = waiting
          assert.deepStrictEqual(yield* store.find(service, done.id), {
            ...doneStored,
            status: "processed",
            attempts: 0,
            processedAt: at(2000)
          })
          assert.deepStrictEqual(yield* store.find(service, waiting.id), {
            ...waitingStored,
            status: "accepted",
            attempts: 0,
            processedAt: null
          })
          const claimed = (yield* store.claim(at(2030), at(2030, 60), 5000)).filter((e) => e.service === service)
          assert.deepStrictEqual(
            claimed.map((e) => e.id),
            [waiting.id]
          )
          yield* store.finish(service, waiting.id, "processed", at(2030, 1))
          // A repeat stays as first stored.
          assert.strictEqual(yield* store.insert({ ...waiting, processed: true }), "duplicate")
          assert.strictEqual((yield* store.find(service, waiting.id))?.processedAt, at(2030, 1))
        })
      )

      it.effect("stores an event claimed by its inserter: one attempt, claimed by nobody before its lease", () =>
        Effect.gen(function* () {
          const store = yield* EventStore
          const service = freshService()
          // Leased past every claim of the other tests here, so only this test's last claim may take it.
          const claimed = eventOf(service, { receivedAt: at(2000, 2), claimedUntil: at(2050) })
          const open = eventOf(service, { receivedAt: at(2000, 3) })
          const done = eventOf(service, { receivedAt: at(2000, 4), processed: true, claimedUntil: at(2050) })
          const outcomes = yield* Effect.all([store.insert(claimed), store.insert(open), store.insert(done)], {
            concurrency: 3
          })
          assert.deepStrictEqual(outcomes, ["new", "new", "new"])
          const { claimedUntil: _claimed, ...claimedStored } = claimed
          assert.deepStrictEqual(yield* store.find(service, claimed.id), {
            ...claimedStored,
            status: "accepted",
            attempts: 1,
            processedAt: null
          })
          // Stored processed, it has no lease to wait for and nothing to claim.
          assert.strictEqual((yield* store.find(service, done.id))?.status, "processed")
          const mine = (events: ReadonlyArray<{ readonly service: string; readonly id: string }>) =>
            events.filter((e) => e.service === service).map((e) => e.id)
          assert.deepStrictEqual(mine(yield* store.claim(at(2049, 59), at(2051), 5000)), [open.id])
          // Its lease passed (the processor it was handed to died): claimed as any other, a second attempt.
          const late = (yield* store.claim(at(2050), at(2050, 60), 5000)).filter((e) => e.service === service)
          assert.deepStrictEqual(
            late.map((e) => [e.id, e.attempts]),
            [[claimed.id, 2]]
          )
          yield* store.finishAll([claimed, open], "processed", at(2050, 1))
        })
      )

      it.effect("gives back an event stored claimed and never processed: unclaimed, its attempt uncounted", () =>
        Effect.gen(function* () {
          const store = yield* EventStore
          const service = freshService()
          const given = eventOf(service, { receivedAt: at(2000, 5), claimedUntil: at(2060) })
          const done = eventOf(service, { receivedAt: at(2000, 6), claimedUntil: at(2060) })
          // Its lease passed before it was given back, and a processor claimed it again.
          const late = eventOf(service, { receivedAt: at(2000, 7), claimedUntil: at(2000, 30) })
          for (const event of [given, done, late]) yield* store.insert(event)
          yield* store.finish(service, done.id, "processed", at(2000, 8))
          const claimedAgain = (yield* store.claim(at(2001), at(2061), 5000)).filter((e) => e.service === service)
          assert.deepStrictEqual(
            claimedAgain.map((e) => [e.id, e.attempts]),
            [[late.id, 2]]
          )
          yield* store.release([given, done, late])
          const progress = (id: string) => Effect.map(store.find(service, id), (e) => [e?.status, e?.attempts])
          assert.deepStrictEqual(yield* progress(given.id), ["accepted", 0])
          assert.deepStrictEqual(yield* progress(done.id), ["processed", 1])
          assert.deepStrictEqual(yield* progress(late.id), ["accepted", 2])
          // Claimable at once, by any processor, with its first attempt; the one claimed again stays held.
          const next = (yield* store.claim(at(2059, 1), at(2061), 5000)).filter((e) => e.service === service)
          assert.deepStrictEqual(
            next.map((e) => [e.id, e.attempts]),
            [[given.id, 1]]
          )
          yield* store.finishAll([given, late], "processed", at(2059, 2))
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

      it.effect("finishes many events in one step, and only those named", () =>
        Effect.gen(function* () {
          const store = yield* EventStore
          const service = freshService()
          const events = [0, 1, 2].map((i) => eventOf(service, { receivedAt: at(2003, i) }))
          for (const event of events) yield* store.insert(event)
          yield* store.finishAll([], "processed", at(2033))
          yield* store.finishAll(
            events.slice(0, 2).map(({ service, id }) => ({ service, id })),
            "processed",
            at(2033, 1)
          )
          const [first, second, third] = yield* Effect.forEach(events, (e) => store.find(service, e.id))
          assert.deepStrictEqual([first?.status, first?.processedAt], ["processed", at(2033, 1)])
          assert.deepStrictEqual([second?.status, second?.processedAt], ["processed", at(2033, 1)])
          assert.deepStrictEqual([third?.status, third?.processedAt], ["accepted", null])
          const due = (yield* store.claim(at(2033, 2), at(2033, 62), 5000)).filter((e) => e.service === service)
          assert.deepStrictEqual(
            due.map((e) => e.id),
            [events[2]!.id]
          )
          yield* store.finish(service, events[2]!.id, "processed", at(2033, 3))
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

      it.effect("files many notifications at once: answers those filed now, leaves out an event filed before", () =>
        Effect.gen(function* () {
          const store = yield* NotificationStore
          const ada = `usr_${randomUUID()}`
          const bob = `usr_${randomUUID()}`
          const before = notificationOf(ada, { createdAt: at(2041, 1) })
          yield* store.file(before)
          assert.deepStrictEqual(yield* store.fileAll([]), [])
          const a = notificationOf(ada, { createdAt: at(2041, 2), body: "b", url: null, category: "c" })
          const b = notificationOf(bob, { createdAt: at(2041, 3), readAt: at(2041, 3) })
          // Given in an order that is not the events' order: answered in the order given.
          const again = { ...before, id: nextId(), title: "other" }
          assert.deepStrictEqual(yield* store.fileAll([b, again, a]), [b, a])
          assert.deepStrictEqual(yield* store.feed(ada, 10), [a, before])
          assert.deepStrictEqual(yield* store.feed(bob, 10), [b])
          // A batch processed again (a processor that crashed after committing) files nothing more.
          assert.deepStrictEqual(
            yield* store.fileAll([
              { ...a, id: nextId() },
              { ...b, id: nextId() }
            ]),
            []
          )
          assert.strictEqual((yield* store.feed(ada, 10)).length, 2)
        })
      )

      it.effect("pages the person's feed by position, leaves hidden services out, and counts what is unread", () =>
        Effect.gen(function* () {
          const store = yield* NotificationStore
          const userId = `usr_${randomUUID()}`
          const filed = Array.from({ length: 5 }, (_, i) =>
            notificationOf(userId, { createdAt: at(2041, i < 2 ? 1 : i), service: i === 3 ? "hidden" : "tasks" })
          )
          for (const n of filed) yield* store.file(n)
          yield* store.file(notificationOf(`usr_${randomUUID()}`))
          const [n0, n1, n2, , n4] = filed as [Notification, Notification, Notification, Notification, Notification]
          const firstPage = yield* store.page(userId, { limit: 2, hiddenServices: ["hidden"] })
          // Same instant: the larger id first.
          assert.deepStrictEqual(firstPage, [n4, n2])
          const rest = yield* store.page(userId, {
            limit: 10,
            after: { createdAt: n2.createdAt, id: n2.id },
            hiddenServices: ["hidden"]
          })
          assert.deepStrictEqual(rest, [n1, n0])
          assert.strictEqual((yield* store.page(userId, { limit: 10, hiddenServices: [] })).length, 5)
          assert.strictEqual(yield* store.unreadCount(userId, ["hidden"]), 4)
          assert.strictEqual(yield* store.unreadCount(userId, []), 5)
        })
      )

      it.effect("marks read once (the first time stays), only the user's own, and all at once", () =>
        Effect.gen(function* () {
          const store = yield* NotificationStore
          const userId = `usr_${randomUUID()}`
          const other = `usr_${randomUUID()}`
          const mine = notificationOf(userId)
          const theirs = notificationOf(other)
          for (const n of [mine, theirs, notificationOf(userId), notificationOf(userId, { readAt: at(2039) })]) {
            yield* store.file(n)
          }
          assert.strictEqual(yield* store.markRead(userId, theirs.id, at(2042)), undefined)
          assert.strictEqual(yield* store.markRead(userId, nextId(), at(2042)), undefined)
          assert.deepStrictEqual(yield* store.markRead(userId, mine.id, at(2042)), { ...mine, readAt: at(2042) })
          assert.deepStrictEqual(yield* store.markRead(userId, mine.id, at(2043)), { ...mine, readAt: at(2042) })
          assert.strictEqual(yield* store.unreadCount(userId, []), 1)
          assert.strictEqual(yield* store.markAllRead(userId, at(2044)), 1)
          assert.strictEqual(yield* store.unreadCount(userId, []), 0)
          assert.strictEqual(yield* store.unreadCount(other, []), 1)
        })
      )
      it.effect(
        "settles every user's notifications leading to a url, in the categories named; the first read stays",
        () =>
          Effect.gen(function* () {
            const store = yield* NotificationStore
            const service = freshService()
            const url = `/apps/${service}/decision-1`
            const [ada, bob] = [`usr_${randomUUID()}`, `usr_${randomUUID()}`]
            const asks = notificationOf(ada, { service, url, category: "ask", body: "Asks for your decision." })
            const read = notificationOf(bob, { service, url, category: "ask", readAt: at(2039) })
            const other = notificationOf(bob, { service, url, category: "fyi" })
            const elsewhere = notificationOf(ada, { service, url: `${url}0`, category: "ask" })
            const otherService = notificationOf(ada, { service: freshService(), url, category: "ask" })
            for (const n of [asks, read, other, elsewhere, otherService]) yield* store.file(n)
            // Ada's email waits for her digest; so does one for Bob's notification of another category.
            const deliveries = yield* DeliveryStore
            yield* deliveries.enqueue([deliveryOf(asks, { nextAttemptAt: at(2090) }), deliveryOf(other)])
            const settlement = { service, url, categories: ["ask"], body: "Answered: Yes.", atIso: at(2041) }
            assert.strictEqual(yield* store.settle([settlement]), 2)
            // Nobody is emailed about what is done; what was not settled is still on its way.
            assert.deepStrictEqual(
              (yield* deliveries.forUser(ada, 10)).map((d) => [d.notificationId, d.status]),
              [[asks.id, "cancelled"]]
            )
            assert.deepStrictEqual(
              (yield* deliveries.forUser(bob, 10)).map((d) => [d.notificationId, d.status]),
              [[other.id, "pending"]]
            )
            assert.deepStrictEqual(yield* store.feed(ada, 10), [
              ...[{ ...asks, body: "Answered: Yes.", readAt: at(2041) }, elsewhere, otherService].sort((x, y) =>
                x.id < y.id ? 1 : -1
              )
            ])
            assert.deepStrictEqual(
              yield* store.feed(bob, 10),
              [{ ...read, body: "Answered: Yes." }, other].sort((x, y) => (x.id < y.id ? 1 : -1))
            )
            // Settled again (an event processed twice): the same as once. No categories: every one leading there.
            assert.strictEqual(yield* store.settle([{ ...settlement, atIso: at(2042) }]), 2)
            assert.strictEqual((yield* store.feed(ada, 10)).find((n) => n.id === asks.id)?.readAt, at(2041))
            assert.strictEqual(yield* store.settle([{ ...settlement, categories: [], body: null }]), 3)
            assert.strictEqual((yield* store.feed(bob, 10)).find((n) => n.id === other.id)?.readAt, at(2041))
            assert.strictEqual((yield* store.feed(bob, 10)).find((n) => n.id === other.id)?.body, other.body)
            assert.strictEqual(yield* store.settle([]), 0)
          })
      )
    })

    describe("NotificationFiling", () => {
      it.effect(
        "files a batch: the notifications, the deliveries of those filed now, a shared row once under the first filed, the events finished",
        () =>
          Effect.gen(function* () {
            const events = yield* EventStore
            const notifications = yield* NotificationStore
            const deliveries = yield* DeliveryStore
            const filing = yield* NotificationFiling
            const service = freshService()
            const [e1, e2, e3] = [eventOf(service), eventOf(service), eventOf(service)]
            for (const e of [e1!, e2!, e3!]) yield* events.insert(e)
            const ada = `usr_a_${randomUUID()}`
            const bob = `usr_b_${randomUUID()}`
            const fields = { service, createdAt: at(2040, 5) }
            // Ada's notification of the first event was filed before (a processor that died before finishing).
            const before = notificationOf(ada, { ...fields, eventId: e1!.id })
            yield* notifications.file(before)
            const again = { ...before, id: nextId() }
            const a = notificationOf(ada, { ...fields, eventId: e2!.id, title: "For Ada" })
            const b = notificationOf(bob, { ...fields, eventId: e3!.id, title: "For Bob", readAt: at(2040, 5) })
            const shared = `org:org_${randomUUID()}/chat/digest`
            const filed = yield* filing.file({
              notifications: [again, b, a],
              deliveries: [
                deliveryOf(again),
                deliveryOf(again, { id: shared, channel: "chat", target: "org:x" }),
                deliveryOf(b, { id: shared, channel: "chat", target: "org:x" }),
                deliveryOf(b),
                deliveryOf(a, { channel: "push", target: "sub_1", nextAttemptAt: at(2090) }),
                deliveryOf(a, { id: shared, channel: "chat", target: "org:x" })
              ],
              finished: [e1!, e2!, e3!].map(({ service, id }) => ({ service, id })),
              atIso: at(2040, 6)
            })
            // Answered in the order given, without the notification filed before.
            assert.deepStrictEqual(filed, [b, a])
            assert.deepStrictEqual(
              yield* notifications.feed(ada, 10),
              [a, before].sort((x, y) => (x.id < y.id ? 1 : -1))
            )
            assert.deepStrictEqual(yield* notifications.feed(bob, 10), [b])
            // Nothing for the notification filed before; the shared row under Bob, the first given of those filed now.
            assert.deepStrictEqual(
              (yield* deliveries.forUser(ada, 10)).map((d) => [d.id, d.channel, d.nextAttemptAt]),
              [[`${a.id}/push/sub_1`, "push", at(2090)]]
            )
            assert.deepStrictEqual(
              (yield* deliveries.forUser(bob, 10)).map((d) => [d.id, d.channel, d.target, d.status]).sort(),
              [
                [`${b.id}/email`, "email", "", "pending"],
                [shared, "chat", "org:x", "pending"]
              ].sort()
            )
            for (const e of [e1!, e2!, e3!]) {
              const stored = yield* events.find(service, e.id)
              assert.strictEqual(stored?.status, "processed")
              assert.strictEqual(stored?.processedAt, at(2040, 6))
            }
            // The same batch again (processed again after a crash): nothing more filed or queued.
            assert.deepStrictEqual(
              yield* filing.file({
                notifications: [{ ...a, id: nextId() }],
                deliveries: [deliveryOf({ ...a, id: nextId() })],
                finished: [{ service, id: e2!.id }],
                atIso: at(2040, 7)
              }),
              []
            )
            assert.strictEqual((yield* deliveries.forUser(ada, 10)).length, 1)
          })
      )

      it.effect("settles the notifications filed before it in the same unit, and finishes a settling event alone", () =>
        Effect.gen(function* () {
          const events = yield* EventStore
          const notifications = yield* NotificationStore
          const filing = yield* NotificationFiling
          const service = freshService()
          const url = `/apps/${service}/decision-2`
          const ada = `usr_${randomUUID()}`
          const asked = notificationOf(ada, { service, url, category: "ask" })
          yield* notifications.file(asked)
          const e = eventOf(service, { type: `${service}.notification.settled` })
          yield* events.insert(e)
          const filed = yield* filing.file({
            notifications: [],
            deliveries: [],
            settlements: [{ service, url, categories: ["ask"], body: "Declined.", atIso: at(2041) }],
            finished: [{ service, id: e.id }],
            atIso: at(2041)
          })
          assert.deepStrictEqual(filed, [])
          assert.deepStrictEqual(yield* notifications.feed(ada, 10), [
            { ...asked, body: "Declined.", readAt: at(2041) }
          ])
          assert.strictEqual((yield* events.find(service, e.id))?.status, "processed")
        })
      )
    })

    describe("DeliveryStore", () => {
      it.effect(
        "queues once; claims each person's email together, counting the attempt; never hands one out twice",
        () =>
          Effect.gen(function* () {
            const notifications = yield* NotificationStore
            const store = yield* DeliveryStore
            const ada = `usr_a_${randomUUID()}`
            const bob = `usr_b_${randomUUID()}`
            const a1 = notificationOf(ada, { createdAt: at(2003, 1) })
            const a2 = notificationOf(ada, { createdAt: at(2003, 3) })
            const b1 = notificationOf(bob, { createdAt: at(2003, 2) })
            for (const n of [a1, a2, b1]) yield* notifications.file(n)
            // Ada's second waits for her digest; Bob's is due later than the claim.
            yield* store.enqueue([deliveryOf(a1), deliveryOf(a2, { nextAttemptAt: at(2050) })])
            yield* store.enqueue([
              deliveryOf(a1, { nextAttemptAt: at(2060) }),
              deliveryOf(b1, { nextAttemptAt: at(2034) })
            ])
            const mine = (groups: ReadonlyArray<ReadonlyArray<ClaimedDelivery>>) =>
              groups.filter((g) => g[0]!.delivery.userId === ada || g[0]!.delivery.userId === bob)
            const groups = mine(yield* store.claimEmail(at(2033), at(2033, 60), 1000))
            assert.strictEqual(groups.length, 1)
            assert.deepStrictEqual(
              groups[0]!.map((c) => [c.delivery.id, c.delivery.status, c.delivery.attempts, c.notification]),
              [
                [`${a1.id}/email`, "sending", 1, a1],
                [`${a2.id}/email`, "sending", 1, a2]
              ]
            )
            // Claimed: never handed out again, not even after the lease.
            assert.deepStrictEqual(mine(yield* store.claimEmail(at(2040), at(2040, 60), 1000)), [
              [
                {
                  delivery: {
                    id: `${b1.id}/email`,
                    notificationId: b1.id,
                    userId: bob,
                    channel: "email",
                    target: "",
                    status: "sending",
                    attempts: 1,
                    nextAttemptAt: at(2034),
                    lastError: null,
                    createdAt: b1.createdAt,
                    sentAt: null
                  },
                  notification: b1
                }
              ]
            ])
            yield* store.settle([`${a1.id}/email`, `${a2.id}/email`], { status: "sent", atIso: at(2040, 1) })
            assert.strictEqual(yield* store.interruptStale(at(2040, 59)), 0)
            assert.isAtLeast(yield* store.interruptStale(at(2040, 60)), 1)
            const log = yield* store.forUser(ada, 10)
            assert.deepStrictEqual(
              log.map((d) => [d.id, d.status, d.sentAt]),
              [
                [`${a2.id}/email`, "sent", at(2040, 1)],
                [`${a1.id}/email`, "sent", at(2040, 1)]
              ]
            )
            const [interrupted] = yield* store.forUser(bob, 10)
            assert.strictEqual(interrupted?.status, "interrupted")
            assert.isString(interrupted?.lastError)
            // A settle from a worker that was only slow still records the truth.
            yield* store.settle([`${b1.id}/email`], { status: "sent", atIso: at(2041) })
            assert.strictEqual((yield* store.forUser(bob, 10))[0]?.status, "sent")
            // A settled delivery does not change again.
            yield* store.settle([`${b1.id}/email`], { status: "failed", error: "late" })
            assert.strictEqual((yield* store.forUser(bob, 10))[0]?.status, "sent")
          })
      )

      it.effect("queues many deliveries at once: a row shared by several notifications once, as first given", () =>
        Effect.gen(function* () {
          const notifications = yield* NotificationStore
          const store = yield* DeliveryStore
          const ada = `usr_a_${randomUUID()}`
          const bob = `usr_b_${randomUUID()}`
          const a = notificationOf(ada, { createdAt: at(2004, 1) })
          const b = notificationOf(bob, { createdAt: at(2004, 2) })
          yield* notifications.fileAll([a, b])
          const shared = `org:org_${randomUUID()}/chat/digest`
          yield* store.enqueue([])
          yield* store.enqueue([
            deliveryOf(a),
            deliveryOf(a, { channel: "push", target: "sub_1" }),
            deliveryOf(a, { id: shared, channel: "chat", target: "org:x" }),
            deliveryOf(b),
            deliveryOf(b, { id: shared, channel: "chat", target: "org:x" })
          ])
          // Queued before: kept as it is.
          yield* store.enqueue([deliveryOf(b, { nextAttemptAt: at(2090) })])
          assert.deepStrictEqual(
            (yield* store.forUser(ada, 10)).map((d) => [d.id, d.channel, d.target, d.status, d.attempts]).sort(),
            [
              [`${a.id}/email`, "email", "", "pending", 0],
              [`${a.id}/push/sub_1`, "push", "sub_1", "pending", 0],
              [shared, "chat", "org:x", "pending", 0]
            ].sort()
          )
          const bobs = yield* store.forUser(bob, 10)
          assert.deepStrictEqual(
            bobs.map((d) => [d.id, d.nextAttemptAt]),
            [[`${b.id}/email`, b.createdAt]]
          )
        })
      )

      it.effect("claims a channel's due deliveries; a retry comes back at its time, then fails or is cancelled", () =>
        Effect.gen(function* () {
          const notifications = yield* NotificationStore
          const store = yield* DeliveryStore
          const userId = `usr_${randomUUID()}`
          const n = notificationOf(userId, { createdAt: at(2005) })
          yield* notifications.file(n)
          const target = `sub_${randomUUID()}`
          yield* store.enqueue([
            deliveryOf(n, { channel: "chat", target: "person" }),
            deliveryOf(n, { channel: "push", target }),
            deliveryOf(n, { channel: "push", target: `${target}_2` })
          ])
          const mine = (claimed: ReadonlyArray<ClaimedDelivery>) => claimed.filter((c) => c.delivery.userId === userId)
          const chat = mine(yield* store.claim("chat", at(2005), at(2005, 60), 1000))
          assert.deepStrictEqual(idsOf(chat), [`${n.id}/chat`])
          yield* store.settle(idsOf(chat), { status: "pending", nextAttemptAt: at(2005, 30), error: "answered 503" })
          assert.deepStrictEqual(mine(yield* store.claim("chat", at(2005, 29), at(2005, 90), 1000)), [])
          const again = mine(yield* store.claim("chat", at(2005, 30), at(2005, 90), 1000))
          assert.deepStrictEqual(
            again.map((c) => [c.delivery.attempts, c.delivery.lastError]),
            [[2, "answered 503"]]
          )
          yield* store.settle(idsOf(again), { status: "failed", error: "answered 404" })
          assert.deepStrictEqual(mine(yield* store.claim("chat", at(2006), at(2006, 60), 1000)), [])

          yield* store.cancelTarget("push", target, "the subscription is gone")
          const pushes = mine(yield* store.claim("push", at(2005), at(2005, 60), 1000))
          assert.deepStrictEqual(idsOf(pushes), [`${n.id}/push/${target}_2`])
          const log = yield* store.forUser(userId, 10)
          assert.deepStrictEqual(Object.fromEntries(log.map((d) => [d.id, [d.status, d.attempts, d.lastError]])), {
            [`${n.id}/chat`]: ["failed", 2, "answered 404"],
            [`${n.id}/push/${target}`]: ["cancelled", 0, "the subscription is gone"],
            [`${n.id}/push/${target}_2`]: ["sending", 1, null]
          })
        })
      )

      it.effect("counts a notification's attempts on one channel over all its targets, claims included", () =>
        Effect.gen(function* () {
          const notifications = yield* NotificationStore
          const store = yield* DeliveryStore
          const userId = `usr_${randomUUID()}`
          const [n, other, none] = [
            notificationOf(userId, { createdAt: at(2007) }),
            notificationOf(userId, { createdAt: at(2007) }),
            notificationOf(userId, { createdAt: at(2007) })
          ]
          for (const x of [n!, other!]) yield* notifications.file(x)
          yield* store.enqueue([
            deliveryOf(n!, { channel: "chat", target: "person" }),
            deliveryOf(n!, { channel: "push", target: "sub_a" }),
            deliveryOf(n!, { channel: "push", target: "sub_b" }),
            deliveryOf(other!, { channel: "push", target: "sub_a" })
          ])
          const mine = (claimed: ReadonlyArray<ClaimedDelivery>) => claimed.filter((c) => c.delivery.userId === userId)
          const first = mine(yield* store.claim("push", at(2007), at(2007, 60), 1000))
          assert.strictEqual(first.length, 3)
          yield* store.settle([`${n!.id}/push/sub_a`], { status: "pending", nextAttemptAt: at(2007, 1), error: "503" })
          yield* store.settle([`${n!.id}/push/sub_b`, `${other!.id}/push/sub_a`], { status: "failed", error: "403" })
          assert.strictEqual(mine(yield* store.claim("push", at(2007, 1), at(2007, 60), 1000)).length, 1)
          yield* store.claim("chat", at(2007), at(2007, 60), 1000)
          const counted = yield* store.attemptsOf("push", [n!.id, other!.id, none!.id, n!.id])
          assert.deepStrictEqual([counted.get(n!.id), counted.get(other!.id), counted.has(none!.id)], [3, 1, false])
          assert.strictEqual((yield* store.attemptsOf("chat", [n!.id])).get(n!.id), 1)
          assert.strictEqual((yield* store.attemptsOf("push", [])).size, 0)
        })
      )

      it.effect("concurrent claims never hand out the same delivery twice", () =>
        Effect.gen(function* () {
          const notifications = yield* NotificationStore
          const store = yield* DeliveryStore
          const prefix = `usr_c_${randomUUID()}`
          const users = Array.from({ length: 40 }, (_, i) => `${prefix}_${String(i).padStart(2, "0")}`)
          const filed = users.flatMap((userId, i) =>
            [0, 1, 2].map((k) => notificationOf(userId, { createdAt: at(2004, i * 3 + k) }))
          )
          yield* Effect.forEach(filed, (n) => notifications.file(n), { discard: true })
          yield* store.enqueue(
            filed.flatMap((n) => [deliveryOf(n), deliveryOf(n, { channel: "chat", target: "person" })])
          )
          const handedOut: Array<string> = []
          for (let round = 0; round < 12; round++) {
            const claims = yield* Effect.forEach(
              Array.from({ length: 12 }),
              (_, i) =>
                i % 2 === 0
                  ? Effect.map(store.claimEmail(at(2035, round), at(2035, round + 60), 3), (groups) => groups.flat())
                  : store.claim("chat", at(2035, round), at(2035, round + 60), 5),
              { concurrency: "unbounded" }
            )
            handedOut.push(
              ...claims
                .flat()
                .filter((c) => c.delivery.userId.startsWith(prefix))
                .map((c) => c.delivery.id)
            )
          }
          assert.strictEqual(new Set(handedOut).size, handedOut.length)
          assert.strictEqual(handedOut.length, filed.length * 2)
        })
      )
    })
    describe("OrgChatWebhookStore", () => {
      it.effect("finds the webhooks of many organizations in one read, those that have one", () =>
        Effect.gen(function* () {
          const store = yield* OrgChatWebhookStore
          const [one, two, none] = [0, 1, 2].map(() => `org_${randomUUID()}`)
          const webhook = (orgId: string, host: string) => ({
            orgId,
            sealedUrl: `sealed:${orgId}`,
            host,
            updatedAt: at(2040)
          })
          yield* store.save(webhook(one!, "chat.one.example"))
          yield* store.save(webhook(two!, "chat.two.example"))
          assert.deepStrictEqual(yield* store.findAll([]), [])
          const found = yield* store.findAll([none!, two!, one!, two!])
          assert.deepStrictEqual(
            [...found].sort((a, b) => (a.orgId < b.orgId ? -1 : 1)),
            [webhook(one!, "chat.one.example"), webhook(two!, "chat.two.example")].sort((a, b) =>
              a.orgId < b.orgId ? -1 : 1
            )
          )
          assert.deepStrictEqual(yield* store.find(one!), webhook(one!, "chat.one.example"))
          assert.isTrue(yield* store.remove(one!))
          assert.deepStrictEqual(
            (yield* store.findAll([one!, two!])).map((w) => w.orgId),
            [two!]
          )
        })
      )
    })

    describe("PushSubscriptionStore", () => {
      const browser = (userId: string, n: number, seconds = n): PushSubscription => ({
        id: nextId(),
        userId,
        endpoint: `https://push.example/${userId}/${n}`,
        sealedKeys: `sealed:${n}`,
        createdAt: at(2040, seconds)
      })
      const endpointsOf = (userId: string) =>
        Effect.map(
          PushSubscriptionStore.use((s) => s.forUser(userId)),
          (list) => list.map((b) => b.endpoint)
        )

      it.effect("keeps a person's ten latest browsers: the eleventh replaces the oldest, no one else's", () =>
        Effect.gen(function* () {
          const store = yield* PushSubscriptionStore
          const [ada, bob] = [`usr_${randomUUID()}`, `usr_${randomUUID()}`]
          yield* store.save(browser(bob!, 0), 10)
          for (let n = 1; n <= 10; n++) yield* store.save(browser(ada!, n), 10)
          assert.strictEqual((yield* endpointsOf(ada!)).length, 10)
          const eleventh = browser(ada!, 11)
          assert.strictEqual(yield* store.save(eleventh, 10), eleventh.id)
          const kept = yield* endpointsOf(ada!)
          assert.deepStrictEqual(
            kept,
            Array.from({ length: 10 }, (_, i) => browser(ada!, i + 2).endpoint)
          )
          assert.deepStrictEqual(yield* endpointsOf(bob!), [browser(bob!, 0).endpoint])
        })
      )

      it.effect("the same endpoint registered again stays one subscription, with its id, registered anew", () =>
        Effect.gen(function* () {
          const store = yield* PushSubscriptionStore
          const ada = `usr_${randomUUID()}`
          const first = browser(ada, 1)
          yield* store.save(first, 10)
          for (let n = 2; n <= 10; n++) yield* store.save(browser(ada, n), 10)
          // The first browser again, later: it is kept (now the latest), and the one that goes is the second.
          const again = { ...first, id: nextId(), sealedKeys: "sealed:new", createdAt: at(2040, 30) }
          assert.strictEqual(yield* store.save(again, 10), first.id)
          yield* store.save(browser(ada, 11), 10)
          const kept = yield* store.forUser(ada)
          assert.strictEqual(kept.length, 10)
          assert.deepStrictEqual(
            kept.map((b) => b.endpoint),
            [
              ...Array.from({ length: 8 }, (_, i) => browser(ada, i + 3).endpoint),
              browser(ada, 11).endpoint,
              first.endpoint
            ]
          )
          assert.deepStrictEqual(yield* store.find(first.id), { ...again, id: first.id })
        })
      )

      it.effect("registrations of one person at the same moment still leave ten", () =>
        Effect.gen(function* () {
          const store = yield* PushSubscriptionStore
          const ada = `usr_${randomUUID()}`
          yield* Effect.forEach(
            Array.from({ length: 16 }, (_, n) => browser(ada, n + 1)),
            (b) => store.save(b, 10),
            { concurrency: "unbounded", discard: true }
          )
          assert.strictEqual((yield* store.forUser(ada)).length, 10)
        })
      )
    })
  })
}
