import { Clock, Context, Effect, Layer, Predicate } from "effect"
import { normalizeEmail } from "../kernel/Email.ts"
import { IdGenerator } from "../kernel/Ids.ts"
import { isoAt } from "../kernel/Timestamp.ts"
import { BellChannel, ChatChannel, EmailChannel, PushChannel } from "./Channels.ts"
import type { ChannelName } from "./Directory.ts"
import { Directory } from "./Directory.ts"
import { EmailQueue } from "./EmailQueue.ts"
import { clipText, EventCatalog } from "./EventCatalog.ts"
import { EventStore, type StoredEvent } from "./EventStore.ts"
import type { Notification } from "./NotificationStore.ts"
import { NotificationStore } from "./NotificationStore.ts"

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
}

/**
 * Processing after the acknowledgement (document 1, "POST /api/webhooks/events": 202 "handled after
 * acknowledgement"). Claims accepted events with a lease, so processors on several servers share the work
 * and a processor that dies mid-event loses nothing (the event is claimed again after the lease). A
 * notification type is filed into the subject's feed once per event (NotificationStore.file is keyed by
 * the event) and fanned out to the user's opted-in channels; email waits in the batch queue. Channels are
 * at least once: an event processed again after a crash fans out its one feed entry again.
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
        const emailQueue = yield* EmailQueue
        const bell = yield* BellChannel
        const chat = yield* ChatChannel
        const push = yield* PushChannel
        const ids = yield* IdGenerator
        const leaseMillis = config.leaseMillis ?? 60_000
        const batchSize = config.batchSize ?? 50
        const maxAttempts = config.maxAttempts ?? 10

        const dispatch = (channel: ChannelName, notification: Notification): Effect.Effect<unknown> => {
          switch (channel) {
            case "bell":
              return bell.send(notification)
            case "chat":
              return chat.send(notification)
            case "push":
              return push.send(notification)
            case "email":
              return emailQueue.enqueue(notification)
          }
        }

        const notify = Effect.fn("EventProcessor.notify")(function* (event: StoredEvent, nowIso: string) {
          const user = yield* directory.findUserByEmail(normalizeEmail(event.subject.email))
          if (user === undefined) {
            // Not an error: the producer's user may not have a workspace account (yet). Logged without the email.
            yield* Effect.logInfo("notification skipped: the subject is not a hub user", {
              service: event.service,
              eventId: event.id
            })
            return
          }
          const { notification } = yield* notifications.file({
            id: yield* ids.next,
            userId: user.id,
            email: user.email,
            service: event.service,
            eventId: event.id,
            type: event.type,
            ...notificationContent(event.type, event.data),
            createdAt: nowIso
          })
          const preferences = yield* directory.preferences(user.id)
          yield* Effect.forEach(
            preferences.channels,
            (channel) =>
              dispatch(channel, notification).pipe(
                Effect.catchCause((cause) => Effect.logWarning(`notification channel ${channel} failed`, cause))
              ),
            { discard: true }
          )
        })

        const processOne = (event: StoredEvent, nowIso: string) =>
          Effect.gen(function* () {
            // Claimed more often than allowed without ever failing: earlier attempts died with their
            // processor (a crash, a restart mid-event). Kept and logged rather than retried forever.
            if (event.attempts > maxAttempts) {
              yield* Effect.logError("event processing never finished; giving up", {
                service: event.service,
                eventId: event.id,
                attempts: event.attempts
              })
              return yield* store.finish(event.service, event.id, "failed", nowIso)
            }
            const entry = yield* catalog.find(event.type)
            if (entry?.isNotification === true) yield* notify(event, nowIso)
            yield* store.finish(event.service, event.id, "processed", nowIso)
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
              })
            )
          )

        return EventProcessor.of({
          runDue: Effect.fn("EventProcessor.runDue")(function* () {
            const now = yield* Clock.currentTimeMillis
            const claimed = yield* store.claim(isoAt(now), isoAt(now + leaseMillis), batchSize)
            yield* Effect.forEach(claimed, (event) => processOne(event, isoAt(now)), { discard: true })
            return claimed.length
          })
        })
      })
    )
}

export interface EmailBatcherConfig {
  readonly leaseMillis?: number | undefined
  /** Users served per run. Default 100. */
  readonly maxUsers?: number | undefined
}

/**
 * Sends the batched email channel: each run claims the users with waiting notifications and sends each
 * of them one email holding all of theirs. Run every batch interval, that is one email per user per
 * interval. An email is at least once: a batcher that dies after sending and before `markSent` sends it
 * again after the lease.
 */
export class EmailBatcher extends Context.Service<EmailBatcher, { readonly runDue: () => Effect.Effect<number> }>()(
  "core/hub/EmailBatcher"
) {
  static readonly layer = (config: EmailBatcherConfig = {}) =>
    Layer.effect(
      EmailBatcher,
      Effect.gen(function* () {
        const queue = yield* EmailQueue
        const channel = yield* EmailChannel
        const leaseMillis = config.leaseMillis ?? 60_000
        const maxUsers = config.maxUsers ?? 100
        return EmailBatcher.of({
          runDue: Effect.fn("EmailBatcher.runDue")(function* () {
            const now = yield* Clock.currentTimeMillis
            const batches = yield* queue.claim(isoAt(now), isoAt(now + leaseMillis), maxUsers)
            yield* Effect.forEach(
              batches,
              (batch) =>
                channel.send(batch).pipe(
                  Effect.andThen(
                    queue.markSent(
                      batch.items.map((item) => item.id),
                      isoAt(now)
                    )
                  ),
                  Effect.catchCause((cause) => Effect.logWarning("email batch failed; it will be retried", cause))
                ),
              { discard: true }
            )
            return batches.length
          })
        })
      })
    )
}
