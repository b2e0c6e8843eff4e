import { type Cause, Clock, Context, Effect, Layer, Option } from "effect"
import { normalizeEmail } from "../kernel/Email.ts"
import { IdGenerator } from "../kernel/Ids.ts"
import { makeClaimPacing } from "../kernel/HandOver.ts"
import { Hub } from "../kernel/Limits.ts"
import { isoAt } from "../kernel/Timestamp.ts"
import { Transactions } from "../kernel/Transactions.ts"
import { DeliveryStore, type NewDelivery } from "./Deliveries.ts"
import { DeliveryWakeup } from "./DeliveryWakeup.ts"
import { Directory, type Recipient, type UserPreferences } from "./Directory.ts"
import { EventCatalog } from "./EventCatalog.ts"
import { defaultEventLeaseMillis, EventHandOver } from "./EventHandOver.ts"
import { EventStore, type StoredEvent } from "./EventStore.ts"
import { isSettlementType } from "./Events.ts"
import { fileWithStores, NotificationFiling } from "./NotificationFiling.ts"
import { notificationContent, settlementOf } from "./NotificationContent.ts"
import { NotificationStore, settled, settles, type Notification, type Settlement } from "./NotificationStore.ts"
import { OrgChatWebhookStore, orgChatDeliveryId, orgChatTarget } from "./OrgChatWebhooks.ts"
import { PushSubscriptionStore } from "./PushSubscriptions.ts"

export interface EventProcessorConfig {
  /** How long a claimed event is held before another processor may take it. Default 60 s. */
  readonly leaseMillis?: number | undefined
  /** Events claimed at once. Default 50. */
  readonly batchSize?: number | undefined
  /** An event whose processing failed this many times is marked failed (and logged). Default 10. */
  readonly maxAttempts?: number | undefined
  /** How long a digest waits for more notifications (`HUB_EMAIL_BATCH_MS`). Default 5 minutes. */
  readonly emailBatchMillis?: number | undefined
  /**
   * While events are handed over (EventHandOver), how seldom the store is also asked for other accepted ones
   * (another instance's, one whose processor died): a batch with events handed over claims only if this long
   * has passed since the last claim. A batch with none handed over always claims. Default 0: every batch claims.
   */
  readonly claimEveryMillis?: number | undefined
}

/**
 * The outbox rows of one notification: the channels the person opted into, nothing for a service they
 * hid; email now or at the end of the digest interval; one push per registered browser; chat only with a
 * webhook to post to.
 */
export const deliveriesFor = (
  notification: Notification,
  preferences: UserPreferences,
  pushTargets: ReadonlyArray<string>,
  emailBatchMillis: number
): ReadonlyArray<NewDelivery> => {
  if (preferences.serviceVisible[notification.service] === false) return []
  const at = notification.createdAt
  const row = (channel: NewDelivery["channel"], target: string, nextAttemptAt = at): NewDelivery => ({
    notificationId: notification.id,
    userId: notification.userId,
    channel,
    target,
    nextAttemptAt,
    createdAt: at
  })
  const on = new Set(preferences.channels)
  return [
    ...(on.has("email")
      ? [
          row(
            "email",
            "",
            (preferences.emailMode ?? "digest") === "digest" ? isoAt(Date.parse(at) + emailBatchMillis) : at
          )
        ]
      : []),
    ...(on.has("chat") && preferences.chatWebhook !== undefined ? [row("chat", "person")] : []),
    ...(on.has("push") ? pushTargets.map((id) => row("push", id)) : [])
  ]
}

/**
 * Processing after the acknowledgement (202 "handled after acknowledgement"). Claims accepted events with a
 * lease, so processors on several servers share the work and a processor that dies mid-event loses nothing
 * (the event is claimed again after the lease). The events this instance's ingest handed over (EventHandOver)
 * were stored claimed: they come first, with no claim of their own. A `<service>.notification.settled` type
 * settles the service's notifications leading to its `url` (`settlementOf`) in the same unit as the rest of
 * its batch. Any other notification type is filed into the subject's feed once per event, and in the same
 * unit of work its deliveries are queued for the person's channels (DeliveryStore) and the event is finished
 * (NotificationFiling, when the server provides one; else the stores' writes in one transaction): an event
 * processed again after a crash finds its notification filed and queues nothing more. A claimed batch is one
 * unit of work (a few statements whatever its size); when it fails, each of its events is tried alone, so that
 * one bad event fails alone. The channels' workers send the deliveries (NotificationDeliveries), woken
 * (DeliveryWakeup, when provided) once a unit that queued a delivery due at once has committed.
 */
export class EventProcessor extends Context.Service<
  EventProcessor,
  {
    /** Processes one batch: the events handed over (EventHandOver), then claimed ones; answers how many. */
    readonly runDue: () => Effect.Effect<number>
    /** The most `runDue` claims at once: a batch this full says more may be due. */
    readonly batchSize: number
  }
>()("core/hub/EventProcessor") {
  static readonly layer = (config: EventProcessorConfig = {}) =>
    Layer.effect(
      EventProcessor,
      Effect.gen(function* () {
        const store = yield* EventStore
        const catalog = yield* EventCatalog
        const directory = yield* Directory
        const notifications = yield* NotificationStore
        const deliveries = yield* DeliveryStore
        const subscriptions = yield* PushSubscriptionStore
        const orgWebhooks = yield* OrgChatWebhookStore
        const transactions = yield* Transactions
        const ids = yield* IdGenerator
        const deliveryWakeup = Option.getOrUndefined(yield* Effect.serviceOption(DeliveryWakeup))
        const handOver = Option.getOrUndefined(yield* Effect.serviceOption(EventHandOver))
        // The stores' own writes in one transaction, unless the server provides a filing of its own (one statement).
        const filing = Option.getOrElse(yield* Effect.serviceOption(NotificationFiling), () =>
          NotificationFiling.of({ file: fileWithStores({ notifications, deliveries, events: store, transactions }) })
        )
        const leaseMillis = config.leaseMillis ?? defaultEventLeaseMillis
        const batchSize = config.batchSize ?? 50
        const maxAttempts = config.maxAttempts ?? 10
        const emailBatchMillis = config.emailBatchMillis ?? 300_000
        const claims = makeClaimPacing(config.claimEveryMillis ?? 0)

        /** One notification to file: the event, whom it is for, and what it shows. */
        interface Planned {
          readonly event: StoredEvent
          readonly recipient: Recipient
          readonly notification: Notification
          /** Settled in the same batch as it is filed: nothing to send. */
          readonly settled?: boolean
        }

        /**
         * The organization's chat channel hears of a notification about that organization (the event's
         * `companyId`) for one of its members, unless the person hid the service; one row per happening,
         * whoever of its people the notification is for (orgChatDeliveryId). The webhooks of the batch's
         * organizations are read once; a person's memberships only when one of them has a webhook.
         */
        const orgChatDeliveries = Effect.fnUntraced(function* (filed: ReadonlyArray<Planned>) {
          const about = filed.filter(
            ({ event, recipient }) =>
              event.subject.companyId !== undefined && recipient.preferences.serviceVisible[event.service] !== false
          )
          if (about.length === 0) return []
          const hooked = new Set(
            (yield* orgWebhooks.findAll([...new Set(about.map(({ event }) => event.subject.companyId!))])).map(
              (webhook) => webhook.orgId
            )
          )
          const orgsOf = new Map<string, ReadonlySet<string>>()
          const rows: Array<NewDelivery> = []
          for (const { event, recipient, notification } of about) {
            const orgId = event.subject.companyId!
            if (!hooked.has(orgId)) continue
            const userId = recipient.user.id
            let orgs = orgsOf.get(userId)
            if (orgs === undefined) {
              orgs = new Set((yield* directory.membershipsOf(userId)).map((m) => m.org.id))
              orgsOf.set(userId, orgs)
            }
            if (!orgs.has(orgId)) continue
            rows.push({
              id: orgChatDeliveryId(orgId, { ...notification, occurredAt: event.occurredAt }),
              notificationId: notification.id,
              userId,
              channel: "chat",
              target: orgChatTarget(orgId),
              nextAttemptAt: notification.createdAt,
              createdAt: notification.createdAt
            })
          }
          return rows
        })

        /** The person's browsers, for those of the people with push on; read once per person. */
        const browsersOf = Effect.fnUntraced(function* (filed: ReadonlyArray<Planned>) {
          const browsers = new Map<string, ReadonlyArray<string>>()
          for (const { recipient } of filed) {
            const userId = recipient.user.id
            if (!recipient.preferences.channels.includes("push") || browsers.has(userId)) continue
            // The latest registered only: whatever is stored, one notification is queued for so many browsers at most.
            browsers.set(
              userId,
              (yield* subscriptions.forUser(userId)).slice(-Hub.pushSubscriptionsPerPerson).map((b) => b.id)
            )
          }
          return browsers
        })

        /**
         * Processes claimed events together and finishes them, in one unit of work: the recipients of their
         * notifications in one read, then together (NotificationFiling: one transaction of the stores, or one
         * statement) the notifications, the deliveries of those filed now and the events marked processed. A
         * crash before the commit leaves them all claimed, processed again after the lease; a notification is
         * filed once per event, and an event found filed queues nothing more.
         */
        const processTogether = Effect.fnUntraced(function* (events: ReadonlyArray<StoredEvent>, nowIso: string) {
          const notifying: Array<StoredEvent> = []
          const settlements: Array<Settlement> = []
          for (const event of events) {
            if ((yield* catalog.find(event.type))?.isNotification !== true) continue
            if (!isSettlementType(event.type)) notifying.push(event)
            else {
              const settlement = settlementOf(event, nowIso)
              if (settlement !== undefined) settlements.push(settlement)
            }
          }
          /** A notification filed with a settlement of the same batch is filed settled (and sent nowhere). */
          const settledNow = (notification: Notification): Notification | undefined => {
            const applying = settlements.filter((settlement) => settles(settlement, notification))
            return applying.length === 0
              ? undefined
              : applying.reduce((current, settlement) => settled(settlement, current), notification)
          }
          const recipients =
            notifying.length === 0
              ? new Map<string, Recipient>()
              : yield* directory.recipients([...new Set(notifying.map((event) => normalizeEmail(event.subject.email)))])
          const planned: Array<Planned> = []
          for (const event of notifying) {
            const recipient = recipients.get(normalizeEmail(event.subject.email))
            if (recipient === undefined) {
              // Not an error: the producer's user may not have a workspace account (yet). Logged without the email.
              yield* Effect.logInfo("notification skipped: the subject is not a hub user", {
                service: event.service,
                eventId: event.id
              })
              continue
            }
            const { user, preferences } = recipient
            const notification: Notification = {
              id: yield* ids.next,
              userId: user.id,
              email: user.email,
              service: event.service,
              eventId: event.id,
              type: event.type,
              ...notificationContent(event.type, event.data),
              createdAt: nowIso,
              // The bell off (or the service hidden): filed for the record, already read.
              readAt:
                preferences.channels.includes("bell") && preferences.serviceVisible[event.service] !== false
                  ? null
                  : nowIso
            }
            const done = settledNow(notification)
            planned.push({ event, recipient, notification: done ?? notification, settled: done !== undefined })
          }
          const keys = events.map(({ service, id }) => ({ service, id }))
          if (planned.length === 0) {
            if (settlements.length === 0) return yield* store.finishAll(keys, "processed", nowIso)
            yield* filing.file({ notifications: [], deliveries: [], settlements, finished: keys, atIso: nowIso })
            return
          }
          // Read for every notification planned: in the usual batch each is filed now. The filing queues only
          // the deliveries of those filed now (an event processed again finds its notification filed).
          const sending = planned.filter((p) => p.settled !== true)
          const browsers = yield* browsersOf(sending)
          const orgChat = yield* orgChatDeliveries(sending)
          const queued = [
            ...sending.flatMap(({ recipient, notification }) =>
              deliveriesFor(
                notification,
                recipient.preferences,
                browsers.get(recipient.user.id) ?? [],
                emailBatchMillis
              )
            ),
            ...orgChat
          ]
          const filed = new Set(
            (yield* filing.file({
              notifications: planned.map((p) => p.notification),
              deliveries: queued,
              settlements,
              finished: keys,
              atIso: nowIso
            })).map((n) => n.id)
          )
          // The sender is woken only for what it can send now: a digest's email waits for the poll.
          if (
            deliveryWakeup !== undefined &&
            queued.some((delivery) => delivery.nextAttemptAt <= nowIso && filed.has(delivery.notificationId))
          ) {
            yield* transactions.afterCommit(deliveryWakeup.wake)
          }
        })

        /** An event whose processing failed alone: retried after its lease, or given up at the attempt limit. */
        const failed = (event: StoredEvent, nowIso: string, cause: Cause.Cause<unknown>) =>
          Effect.gen(function* () {
            const giveUp = event.attempts >= maxAttempts
            yield* Effect.logError(
              giveUp ? "event processing failed; giving up" : "event processing failed; it will be retried",
              { service: event.service, eventId: event.id, attempts: event.attempts },
              cause
            )
            if (giveUp) yield* store.finish(event.service, event.id, "failed", nowIso)
          })

        /** The batch together; when that fails, each event alone, so that one bad event fails alone. */
        const process = (events: ReadonlyArray<StoredEvent>, nowIso: string): Effect.Effect<void> =>
          processTogether(events, nowIso).pipe(
            Effect.catchCause((cause) =>
              events.length === 1
                ? failed(events[0]!, nowIso, cause)
                : Effect.forEach(events, (event) => process([event], nowIso), { discard: true })
            ),
            // A failure of the failure's own bookkeeping: the event stays claimed, processed again after its lease.
            Effect.catchCause((cause) => Effect.logError("event processing failed", cause))
          )

        return EventProcessor.of({
          batchSize,
          runDue: Effect.fn("EventProcessor.runDue")(function* () {
            const now = yield* Clock.currentTimeMillis
            const nowIso = isoAt(now)
            // What ingest handed over is already claimed by this instance; the store is asked for the rest.
            const handed = handOver === undefined ? [] : yield* handOver.take(batchSize)
            const claimed = claims(handed.length, batchSize, now)
              ? yield* store.claim(nowIso, isoAt(now + leaseMillis), batchSize - handed.length)
              : []
            // Claimed more often than allowed without ever failing: earlier attempts died with their
            // processor (a crash, a restart mid-event). Kept and logged rather than retried forever.
            const live: Array<StoredEvent> = [...handed]
            for (const event of claimed) {
              if (event.attempts <= maxAttempts) {
                live.push(event)
                continue
              }
              yield* Effect.logError("event processing never finished; giving up", {
                service: event.service,
                eventId: event.id,
                attempts: event.attempts
              })
              yield* store.finish(event.service, event.id, "failed", nowIso)
            }
            if (live.length > 0) yield* process(live, nowIso)
            return handed.length + claimed.length
          })
        })
      })
    )
}
