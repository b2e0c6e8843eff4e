import { Clock, Context, Effect, Layer, Result, Schema } from "effect"
import { seal } from "../auth/SecretBox.ts"
import { IdGenerator } from "../kernel/Ids.ts"
import { NotConfigured, NotFound, ValidationError } from "../kernel/Errors.ts"
import { bodyIssue, queryIssue, type FieldIssue } from "../kernel/FieldIssue.ts"
import { Hub } from "../kernel/Limits.ts"
import { decodeCursor, encodeCursor } from "../kernel/Paging.ts"
import { isoAt } from "../kernel/Timestamp.ts"
import { checkWebhookUrl } from "../kernel/WebhookUrl.ts"
import { PushChannel } from "./Channels.ts"
import { ChannelNames, Directory, EmailModes, type EmailMode, type UserPreferences } from "./Directory.ts"
import { NotificationStore, type Notification } from "./NotificationStore.ts"
import { PushSubscriptionStore } from "./PushSubscriptions.ts"

const ServiceKey = Schema.String.check(Schema.isPattern(/^[a-z0-9-]{1,64}$/))

/** A change to a person's notification preferences: only the fields named change. */
export const PreferencesPatch = Schema.Struct({
  channels: Schema.optionalKey(
    Schema.Array(Schema.Literals(ChannelNames)).check(Schema.isMaxLength(ChannelNames.length))
  ),
  emailMode: Schema.optionalKey(Schema.Literals(EmailModes)),
  /** A Slack-compatible incoming-webhook URL; null removes it. */
  chatWebhookUrl: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMaxLength(2048)))),
  serviceVisible: Schema.optionalKey(Schema.Record(ServiceKey, Schema.Boolean))
}).annotate({ identifier: "UserPreferencesUpdate" })
export type PreferencesPatch = typeof PreferencesPatch.Type

/** Preferences as a person (or an operator) sees them: the chat webhook's URL is a secret, never shown. */
export interface PublicPreferences {
  readonly channels: ReadonlyArray<(typeof ChannelNames)[number]>
  readonly emailMode: EmailMode
  readonly chatWebhook: boolean
  readonly serviceVisible: Readonly<Record<string, boolean>>
}

export const publicPreferences = (p: UserPreferences): PublicPreferences => ({
  channels: p.channels,
  emailMode: p.emailMode ?? "digest",
  chatWebhook: p.chatWebhook !== undefined,
  serviceVisible: p.serviceVisible
})

/** A browser's push subscription as the Push API serializes it (`PushSubscription.toJSON()`). */
export const PushSubscriptionBody = Schema.Struct({
  endpoint: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(2048)),
  keys: Schema.Struct({
    // An uncompressed P-256 point (65 bytes) and a 16-byte secret, base64url.
    p256dh: Schema.String.check(Schema.isPattern(/^[A-Za-z0-9_-]{86,88}={0,2}$/)),
    auth: Schema.String.check(Schema.isPattern(/^[A-Za-z0-9_-]{21,24}={0,2}$/))
  })
}).annotate({ identifier: "PushSubscription" })
export type PushSubscriptionBody = typeof PushSubscriptionBody.Type

/** One entry of the person's feed. */
export interface FeedItem {
  readonly id: string
  readonly service: string
  readonly type: string
  readonly title: string
  readonly body: string | null
  readonly url: string | null
  readonly createdAt: string
  readonly readAt: string | null
}

export interface FeedPage {
  readonly items: ReadonlyArray<FeedItem>
  readonly unreadCount: number
  readonly nextCursor: string | null
}

export const feedLimitDefault = 20
export const feedLimitMax = 100

const feedItem = (n: Notification): FeedItem => ({
  id: n.id,
  service: n.service,
  type: n.type,
  title: n.title,
  body: n.body,
  url: n.url,
  createdAt: n.createdAt,
  readAt: n.readAt
})

const hiddenOf = (p: UserPreferences) =>
  Object.entries(p.serviceVisible)
    .filter(([, visible]) => !visible)
    .map(([service]) => service)

const invalid = (issue: FieldIssue) =>
  new ValidationError({ message: `${issue.field} ${issue.message}.`, details: [issue] })

export interface PersonNotificationsConfig {
  /** Seals chat webhooks and push keys; without it neither can be saved (fails closed). */
  readonly secretsKey: string | undefined
  /** Outside production, http to loopback is allowed for chat webhooks and push endpoints (development, tests). */
  readonly allowLoopbackHttp: boolean
}

/**
 * What a signed-in person does with their own notifications: read their feed (the bell), mark entries
 * read, choose their channels, and register browsers for web push. Every operation is scoped to the
 * person's user id: someone else's notification is the same NotFound as a missing one.
 */
export class PersonNotifications extends Context.Service<
  PersonNotifications,
  {
    readonly feed: (
      userId: string,
      query: { readonly limit?: number | undefined; readonly cursor?: string | undefined }
    ) => Effect.Effect<FeedPage, ValidationError>
    readonly markRead: (userId: string, id: string) => Effect.Effect<FeedItem, NotFound>
    readonly markAllRead: (userId: string) => Effect.Effect<number>
    readonly preferences: (userId: string) => Effect.Effect<PublicPreferences>
    readonly updatePreferences: (
      userId: string,
      patch: PreferencesPatch
    ) => Effect.Effect<PublicPreferences, ValidationError | NotConfigured>
    readonly pushKey: () => Effect.Effect<string, NotConfigured>
    readonly subscribe: (
      userId: string,
      body: PushSubscriptionBody
    ) => Effect.Effect<void, ValidationError | NotConfigured>
    /** False when the person has no subscription with that endpoint. */
    readonly unsubscribe: (userId: string, endpoint: string) => Effect.Effect<boolean>
  }
>()("core/hub/PersonNotifications") {
  static readonly layer = (config: PersonNotificationsConfig) =>
    Layer.effect(
      PersonNotifications,
      Effect.gen(function* () {
        const directory = yield* Directory
        const notifications = yield* NotificationStore
        const subscriptions = yield* PushSubscriptionStore
        const push = yield* PushChannel
        const ids = yield* IdGenerator
        const now = Effect.map(Clock.currentTimeMillis, isoAt)
        const noKey = new NotConfigured({ message: "This server cannot keep secrets: its secrets key is not set." })

        return PersonNotifications.of({
          feed: Effect.fn("PersonNotifications.feed")(function* (userId, query) {
            const limit = query.limit ?? feedLimitDefault
            let after: { createdAt: string; id: string } | undefined
            if (query.cursor !== undefined) {
              const key = decodeCursor(query.cursor)
              const [createdAt, id] = Result.isSuccess(key) ? key.success : []
              if (typeof createdAt !== "string" || typeof id !== "string" || !Number.isFinite(Date.parse(createdAt))) {
                return yield* invalid(queryIssue("cursor", "is not a cursor this list returned"))
              }
              after = { createdAt, id }
            }
            const preferences = yield* directory.preferences(userId)
            const hiddenServices = hiddenOf(preferences)
            const rows = yield* notifications.page(userId, { limit: limit + 1, after, hiddenServices })
            const items = rows.slice(0, limit)
            const last = items[items.length - 1]
            return {
              items: items.map(feedItem),
              unreadCount: yield* notifications.unreadCount(userId, hiddenServices),
              nextCursor: rows.length > limit && last !== undefined ? encodeCursor([last.createdAt, last.id]) : null
            }
          }),
          markRead: Effect.fn("PersonNotifications.markRead")(function* (userId, id) {
            const read = yield* notifications.markRead(userId, id, yield* now)
            if (read === undefined) return yield* new NotFound({ message: "No such notification." })
            return feedItem(read)
          }),
          markAllRead: (userId) => Effect.flatMap(now, (at) => notifications.markAllRead(userId, at)),
          preferences: (userId) => Effect.map(directory.preferences(userId), publicPreferences),
          updatePreferences: Effect.fn("PersonNotifications.updatePreferences")(function* (userId, patch) {
            const current = yield* directory.preferences(userId)
            let chatWebhook = current.chatWebhook
            if (patch.chatWebhookUrl === null) chatWebhook = undefined
            else if (patch.chatWebhookUrl !== undefined) {
              const checked = checkWebhookUrl(patch.chatWebhookUrl, { allowLoopbackHttp: config.allowLoopbackHttp })
              if (Result.isFailure(checked)) return yield* invalid(bodyIssue("chatWebhookUrl", checked.failure))
              if (config.secretsKey === undefined) return yield* noKey
              chatWebhook = seal(config.secretsKey, checked.success)
            }
            const next: UserPreferences = {
              channels: patch.channels === undefined ? current.channels : [...new Set(patch.channels)],
              serviceVisible: patch.serviceVisible ?? current.serviceVisible,
              emailMode: patch.emailMode ?? current.emailMode ?? "digest",
              ...(chatWebhook === undefined ? {} : { chatWebhook })
            }
            yield* directory.savePreferences(userId, next)
            return publicPreferences(next)
          }),
          pushKey: () =>
            push.publicKey === undefined
              ? Effect.fail(new NotConfigured({ message: "Web push is not configured on this server." }))
              : Effect.succeed(push.publicKey),
          subscribe: Effect.fn("PersonNotifications.subscribe")(function* (userId, body) {
            if (push.publicKey === undefined) {
              return yield* new NotConfigured({ message: "Web push is not configured on this server." })
            }
            const checked = checkWebhookUrl(body.endpoint, { allowLoopbackHttp: config.allowLoopbackHttp })
            if (Result.isFailure(checked)) return yield* invalid(bodyIssue("endpoint", checked.failure))
            if (Buffer.from(body.keys.p256dh, "base64url").length !== 65) {
              return yield* invalid(bodyIssue("keys.p256dh", "must be an uncompressed P-256 public key"))
            }
            if (Buffer.from(body.keys.auth, "base64url").length !== 16) {
              return yield* invalid(bodyIssue("keys.auth", "must be a 16-byte secret"))
            }
            if (config.secretsKey === undefined) return yield* noKey
            yield* subscriptions.save(
              {
                id: yield* ids.next,
                userId,
                endpoint: body.endpoint,
                sealedKeys: seal(config.secretsKey, JSON.stringify({ p256dh: body.keys.p256dh, auth: body.keys.auth })),
                createdAt: yield* now
              },
              Hub.pushSubscriptionsPerPerson
            )
          }),
          unsubscribe: (userId, endpoint) => subscriptions.remove(userId, endpoint)
        })
      })
    )
}
