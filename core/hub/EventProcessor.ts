import { Clock, Context, Effect, Layer, Predicate } from "effect"
import { normalizeEmail } from "../kernel/Email.ts"
import { IdGenerator } from "../kernel/Ids.ts"
import { isoAt } from "../kernel/Timestamp.ts"
import { Transactions } from "../kernel/Transactions.ts"
import { DeliveryStore, type NewDelivery } from "./Deliveries.ts"
import { Directory, type UserPreferences } from "./Directory.ts"
import { clipText, EventCatalog } from "./EventCatalog.ts"
import { EventStore, type StoredEvent } from "./EventStore.ts"
import type { Notification } from "./NotificationStore.ts"
import { NotificationStore } from "./NotificationStore.ts"
import { OrgChatWebhookStore, orgChatDeliveryId, orgChatTarget } from "./OrgChatWebhooks.ts"
import { PushSubscriptionStore } from "./PushSubscriptions.ts"

const text = (data: Record<string, unknown>, key: string, max: number): string | null => {
  const value = Object.hasOwn(data, key) ? data[key] : undefined
  return typeof value === "string" && value.length > 0 ? clipText(value, max) : null
}

/**
 * A link a feed may render: a workspace-relative path or an http(s) URL. Anything else (`javascript:`,
 * `data:`, a protocol-relative `//host`) is dropped: a catalog schema may say only "a string" or "a uri",
 * and the feed is shown to the user inside the workspace.
 */
const safeLink = (url: string | null): string | null => {
  if (url === null) return null
  if (url.startsWith("/")) return /^\/[/\\]/.test(url) ? null : url
  return URL.canParse(url) && ["http:", "https:"].includes(new URL(url).protocol) ? url : null
}

/**
 * What a notification shows, read from the event's `data` (already checked against the type's schema):
 * `title`, `body`, `url`, `category` (the first-party shape, core/hub/FirstPartyCatalog.ts). The task
 * inbox's events name their target `link` and their text `reason`, so those stand in for `url` and `body`.
 * A type whose schema has no title shows its type name; a link that is not a path or http(s) is dropped.
 */
export const notificationContent = (
  type: string,
  data: unknown
): Pick<Notification, "title" | "body" | "url" | "category"> => {
  const fields = Predicate.isObject(data) && !Array.isArray(data) ? (data as Record<string, unknown>) : {}
  return {
    title: text(fields, "title", 200) ?? type,
    body: text(fields, "body", 2000) ?? text(fields, "reason", 2000),
    url: safeLink(text(fields, "url", 2048) ?? text(fields, "link", 2048)),
    category: text(fields, "category", 64)
  }
}

export interface EventProcessorConfig {
  /** How long a claimed event is held before another processor may take it. Default 60 s. */
  readonly leaseMillis?: number | undefined
  /** Events claimed at once. Default 50. */
  readonly batchSize?: number | undefined
  /** An event whose processing failed this many times is marked failed (and logged). Default 10. */
  readonly maxAttempts?: number | undefined
  /** How long a digest waits for more notifications (`HUB_EMAIL_BATCH_MS`). Default 5 minutes. */
  readonly emailBatchMillis?: number | undefined
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
 * Processing after the acknowledgement (202 "handled after
 * acknowledgement"). Claims accepted events with a lease, so processors on several servers share the work
 * and a processor that dies mid-event loses nothing (the event is claimed again after the lease). A
 * notification type is filed into the subject's feed once per event, and in the same unit of work its
 * deliveries are queued for the person's channels (DeliveryStore): an event processed again after a crash
 * finds its notification filed and queues nothing more. The channels' workers send them
 * (NotificationDeliveries).
 */
export class EventProcessor extends Context.Service<
  EventProcessor,
  {
    /** Processes one batch of claimed events; answers how many were claimed. */
    readonly runDue: () => Effect.Effect<number>
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
        const leaseMillis = config.leaseMillis ?? 60_000
        const batchSize = config.batchSize ?? 50
        const maxAttempts = config.maxAttempts ?? 10
        const emailBatchMillis = config.emailBatchMillis ?? 300_000

        /**
         * The organization's chat channel hears of a notification about that organization (the event's
         * `companyId`) for one of its members, unless the person hid the service; one row per happening,
         * whoever of its people the notification is for (orgChatDeliveryId).
         */
        const orgChatDelivery = Effect.fnUntraced(function* (
          event: StoredEvent,
          notification: Notification,
          preferences: UserPreferences,
          userId: string
        ) {
          const orgId = event.subject.companyId
          if (orgId === undefined || preferences.serviceVisible[event.service] === false) return undefined
          if ((yield* orgWebhooks.find(orgId)) === undefined) return undefined
          const memberships = yield* directory.membershipsOf(userId)
          if (!memberships.some((m) => m.org.id === orgId)) return undefined
          const delivery: NewDelivery = {
            id: orgChatDeliveryId(orgId, { ...notification, occurredAt: event.occurredAt }),
            notificationId: notification.id,
            userId,
            channel: "chat",
            target: orgChatTarget(orgId),
            nextAttemptAt: notification.createdAt,
            createdAt: notification.createdAt
          }
          return delivery
        })

        const notify = Effect.fn("EventProcessor.notify")(function* (event: StoredEvent, nowIso: string) {
          const recipient = yield* directory.recipient(normalizeEmail(event.subject.email))
          if (recipient === undefined) {
            // Not an error: the producer's user may not have a workspace account (yet). Logged without the email.
            yield* Effect.logInfo("notification skipped: the subject is not a hub user", {
              service: event.service,
              eventId: event.id
            })
            return
          }
          const { user, preferences } = recipient
          const id = yield* ids.next
          yield* transactions.atomically(
            Effect.gen(function* () {
              const { notification, filed } = yield* notifications.file({
                id,
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
              })
              if (!filed) return
              const browsers = preferences.channels.includes("push") ? yield* subscriptions.forUser(user.id) : []
              yield* deliveries.enqueue(
                deliveriesFor(
                  notification,
                  preferences,
                  browsers.map((b) => b.id),
                  emailBatchMillis
                )
              )
              const orgChat = yield* orgChatDelivery(event, notification, preferences, user.id)
              if (orgChat !== undefined) yield* deliveries.enqueue([orgChat])
            })
          )
        })

        /** Processes one claimed event; answers whether it is done (finished together with the batch's others). */
        const processOne = (event: StoredEvent, nowIso: string): Effect.Effect<boolean> =>
          Effect.gen(function* () {
            // Claimed more often than allowed without ever failing: earlier attempts died with their
            // processor (a crash, a restart mid-event). Kept and logged rather than retried forever.
            if (event.attempts > maxAttempts) {
              yield* Effect.logError("event processing never finished; giving up", {
                service: event.service,
                eventId: event.id,
                attempts: event.attempts
              })
              yield* store.finish(event.service, event.id, "failed", nowIso)
              return false
            }
            const entry = yield* catalog.find(event.type)
            if (entry?.isNotification === true) yield* notify(event, nowIso)
            return true
          }).pipe(
            Effect.catchCause((cause) =>
              Effect.gen(function* () {
                const giveUp = event.attempts >= maxAttempts
                yield* Effect.logError(
                  giveUp ? "event processing failed; giving up" : "event processing failed; it will be retried",
                  { service: event.service, eventId: event.id, attempts: event.attempts },
                  cause
                )
                if (giveUp) yield* store.finish(event.service, event.id, "failed", nowIso)
                return false
              })
            )
          )

        return EventProcessor.of({
          runDue: Effect.fn("EventProcessor.runDue")(function* () {
            const now = yield* Clock.currentTimeMillis
            const nowIso = isoAt(now)
            const claimed = yield* store.claim(nowIso, isoAt(now + leaseMillis), batchSize)
            const done = yield* Effect.filter(claimed, (event) => processOne(event, nowIso))
            // One statement for the batch. A crash before it leaves them claimed: processed again after the
            // lease, which files nothing twice (a notification is filed once per event).
            yield* store.finishAll(done, "processed", nowIso)
            return claimed.length
          })
        })
      })
    )
}
