import { Clock, Context, Effect, Layer, Random } from "effect"
import { open } from "../auth/SecretBox.ts"
import { Mailer } from "../kernel/Mailer.ts"
import { Hub } from "../kernel/Limits.ts"
import { isoAt } from "../kernel/Timestamp.ts"
import { ChannelFailure, ChatChannel, PushChannel, type PushTarget } from "./Channels.ts"
import { DeliveryStore, retryAt, type ClaimedDelivery, type DeliveryOutcome } from "./Deliveries.ts"
import { Directory, type ChannelName, type UserPreferences } from "./Directory.ts"
import { chatMessage, chatText, emailMessage, pushPayload } from "./NotificationMessages.ts"
import { OrgChatWebhooks, orgOfChatTarget } from "./OrgChatWebhooks.ts"
import { PushSubscriptionStore } from "./PushSubscriptions.ts"

export interface NotificationDeliveriesConfig {
  /** Where people reach the workspace (`HUB_PUBLIC_URL`): links in emails, chat messages and pushes. */
  readonly publicUrl: string
  /** Opens the sealed chat webhooks and push keys; without it chat and push deliveries cannot be sent. */
  readonly secretsKey: string | undefined
  /** Seconds before each retry; its length is how many retries follow the first attempt. */
  readonly retrySchedule: ReadonlyArray<number>
  /**
   * How long a claim is held: a delivery still `sending` after this was claimed by a server that stopped,
   * and is marked interrupted. Longer than any one send may take. Default 10 minutes.
   */
  readonly leaseMillis?: number | undefined
  /** Deliveries (people, for email) claimed per channel and run. Default 50. */
  readonly batchSize?: number | undefined
}

const gone = (reason: string): DeliveryOutcome => ({ status: "cancelled", error: reason })

const overPushBudget: DeliveryOutcome = {
  status: "failed",
  error: "the notification made as many push requests as one notification may"
}

/**
 * Sends what the channels' outbox holds (docs/notifications.md, "Channels, preferences and delivery").
 * Every run first marks as interrupted what a stopped server left `sending`, then claims due deliveries
 * per channel and sends them: email as one message per person with every email delivery that waited,
 * chat and push one by one. A claim counts the attempt and is committed before anything is sent, so a
 * notification reaches a channel at most once, even across a crash: a crash before the claim only delays
 * it, a crash between the claim and the peer's answer leaves it interrupted (never sent twice).
 * Preferences are read again at sending time: a channel turned off or a service hidden since the
 * notification was filed cancels what had not gone yet.
 */
export class NotificationDeliveries extends Context.Service<
  NotificationDeliveries,
  {
    /** One pass over every channel; answers how many deliveries it claimed. */
    readonly runDue: () => Effect.Effect<number>
    /** The most one channel's claim takes at once: a pass that claimed this many may have left more due. */
    readonly batchSize: number
  }
>()("core/hub/NotificationDeliveries") {
  static readonly layer = (config: NotificationDeliveriesConfig) =>
    Layer.effect(
      NotificationDeliveries,
      Effect.gen(function* () {
        const store = yield* DeliveryStore
        const directory = yield* Directory
        const mailer = yield* Mailer
        const chat = yield* ChatChannel
        const push = yield* PushChannel
        const subscriptions = yield* PushSubscriptionStore
        const orgWebhooks = yield* OrgChatWebhooks
        const leaseMillis = config.leaseMillis ?? 600_000
        const batchSize = config.batchSize ?? 50

        /** Why a claimed delivery should not go out any more, if it should not. */
        const withdrawn = (channel: ChannelName, service: string, preferences: UserPreferences) =>
          preferences.serviceVisible[service] === false
            ? "the person hid this service"
            : preferences.channels.includes(channel)
              ? undefined
              : "the person turned this channel off"

        /**
         * A failed attempt: tried again on the schedule (core/hub/Deliveries.ts `deliveryRetryPolicy`), or failed
         * once it is spent (or it cannot help). `jitter` in [0, 1) is drawn once per message sent.
         */
        const afterFailure = (
          attempts: number,
          failure: ChannelFailure,
          nowMs: number,
          jitter: number
        ): DeliveryOutcome => {
          const next =
            failure.kind === "transient" ? retryAt(config.retrySchedule, { attempts, nowMs, jitter }) : undefined
          if (failure.kind === "gone") return gone(failure.reason)
          return next === undefined
            ? { status: "failed", error: failure.reason }
            : { status: "pending", nextAttemptAt: next, error: failure.reason }
        }

        const settleOne = (claimed: ClaimedDelivery, outcome: DeliveryOutcome) =>
          store.settle([claimed.delivery.id], outcome)

        const sendEmail = Effect.fnUntraced(function* (group: ReadonlyArray<ClaimedDelivery>, nowMs: number) {
          const userId = group[0]!.delivery.userId
          const preferences = yield* directory.preferences(userId)
          const keep: Array<ClaimedDelivery> = []
          for (const claimed of group) {
            const reason = withdrawn("email", claimed.notification.service, preferences)
            if (reason === undefined) keep.push(claimed)
            else yield* settleOne(claimed, gone(reason))
          }
          if (keep.length === 0) return
          const user = yield* directory.findUserById(userId)
          const to = user?.email ?? keep[0]!.notification.email
          const message = emailMessage(
            config.publicUrl,
            to,
            keep.map((c) => c.notification)
          )
          const sent = yield* Effect.result(mailer.send(message))
          if (sent._tag === "Success") {
            return yield* store.settle(
              keep.map((c) => c.delivery.id),
              { status: "sent", atIso: isoAt(nowMs) }
            )
          }
          const failure = new ChannelFailure({
            kind: sent.failure.permanent ? "permanent" : "transient",
            reason: sent.failure.permanent ? "the mail server refused the message" : "the mail server was not reachable"
          })
          yield* Effect.logWarning("notification email not sent", { userId, reason: failure.reason })
          // One draw for the message: what went out together comes back together.
          const jitter = yield* Random.next
          for (const claimed of keep) {
            yield* settleOne(claimed, afterFailure(claimed.delivery.attempts, failure, nowMs, jitter))
          }
        })

        /** The person's own webhook, or their organization's (the target says whose). */
        const chatUrl = Effect.fnUntraced(function* (claimed: ClaimedDelivery) {
          const preferences = yield* directory.preferences(claimed.delivery.userId)
          const orgId = orgOfChatTarget(claimed.delivery.target)
          if (orgId !== undefined) {
            // The person's own chat channel being off does not silence their organization's channel.
            if (preferences.serviceVisible[claimed.notification.service] === false) {
              return { withdrawn: "the person hid this service" } as const
            }
            return { url: yield* orgWebhooks.urlOf(orgId) }
          }
          const reason = withdrawn("chat", claimed.notification.service, preferences)
          if (reason !== undefined) return { withdrawn: reason } as const
          return {
            url:
              preferences.chatWebhook === undefined || config.secretsKey === undefined
                ? undefined
                : open(config.secretsKey, preferences.chatWebhook)
          }
        })

        const sendChat = Effect.fnUntraced(function* (claimed: ClaimedDelivery, nowMs: number) {
          const target = yield* chatUrl(claimed)
          if ("withdrawn" in target) return yield* settleOne(claimed, gone(target.withdrawn))
          const url = target.url
          if (url === undefined) return yield* settleOne(claimed, gone("no chat webhook is configured"))
          // An answer link is one person's: the organization's channel gets the message without them.
          const message =
            orgOfChatTarget(claimed.delivery.target) === undefined
              ? chatMessage(config.publicUrl, claimed.notification)
              : { text: chatText(config.publicUrl, claimed.notification) }
          const sent = yield* Effect.result(chat.post(url, message.text, message.blocks))
          yield* settleOne(
            claimed,
            sent._tag === "Success"
              ? { status: "sent", atIso: isoAt(nowMs) }
              : afterFailure(claimed.delivery.attempts, sent.failure, nowMs, yield* Random.next)
          )
        })

        const sendPush = Effect.fnUntraced(function* (claimed: ClaimedDelivery, nowMs: number) {
          const preferences = yield* directory.preferences(claimed.delivery.userId)
          const reason = withdrawn("push", claimed.notification.service, preferences)
          if (reason !== undefined) return yield* settleOne(claimed, gone(reason))
          const subscription = yield* subscriptions.find(claimed.delivery.target)
          const keys =
            subscription === undefined || config.secretsKey === undefined
              ? undefined
              : open(config.secretsKey, subscription.sealedKeys)
          // Removed, or registered since by someone else (the endpoint changed hands): not this person's browser.
          if (subscription === undefined || keys === undefined || subscription.userId !== claimed.delivery.userId) {
            return yield* settleOne(claimed, gone("the browser's subscription was removed"))
          }
          const target: PushTarget = { endpoint: subscription.endpoint, keys: JSON.parse(keys) as PushTarget["keys"] }
          const sent = yield* Effect.result(push.send(target, pushPayload(config.publicUrl, claimed.notification)))
          if (sent._tag === "Failure" && sent.failure.kind === "gone") {
            // The push service forgot the subscription: so does the hub, with what was still queued for it.
            yield* subscriptions.removeById(subscription.id)
            yield* store.cancelTarget("push", subscription.id, sent.failure.reason)
          }
          yield* settleOne(
            claimed,
            sent._tag === "Success"
              ? { status: "sent", atIso: isoAt(nowMs) }
              : afterFailure(claimed.delivery.attempts, sent.failure, nowMs, yield* Random.next)
          )
        })

        /**
         * The claimed pushes that may go out: a notification makes at most `Hub.pushAttemptsPerNotification` push
         * requests over all of the person's browsers, first sends and retries alike. Read after the claim has
         * committed, the notification's counted attempts include this batch's and any other worker's claims made
         * so far; of this batch's, only as many go as the budget leaves beside the others (the first ones, oldest
         * first). Two workers reading at once each see the other's claims, so together they never exceed it.
         */
        const withinPushBudget = Effect.fnUntraced(function* (claimed: ReadonlyArray<ClaimedDelivery>) {
          if (claimed.length === 0) return { allowed: claimed, overBudget: [] }
          const counted = yield* store.attemptsOf(
            "push",
            claimed.map((c) => c.notification.id)
          )
          const inBatch = new Map<string, number>()
          for (const c of claimed) inBatch.set(c.notification.id, (inBatch.get(c.notification.id) ?? 0) + 1)
          const granted = new Map<string, number>()
          const allowed: Array<ClaimedDelivery> = []
          const overBudget: Array<ClaimedDelivery> = []
          for (const c of claimed) {
            const id = c.notification.id
            const before = (counted.get(id) ?? 0) - inBatch.get(id)!
            const taken = granted.get(id) ?? 0
            if (before + taken < Hub.pushAttemptsPerNotification) {
              granted.set(id, taken + 1)
              allowed.push(c)
            } else overBudget.push(c)
          }
          return { allowed, overBudget }
        })

        /** A send that died unexpectedly (a defect) is logged; its delivery stays `sending` and is interrupted later. */
        const guarded = <R>(what: string, effect: Effect.Effect<void, never, R>) =>
          Effect.catchCause(effect, (cause) => Effect.logError(`notification ${what} delivery failed`, cause))

        return NotificationDeliveries.of({
          batchSize,
          runDue: Effect.fn("NotificationDeliveries.runDue")(function* () {
            const nowMs = yield* Clock.currentTimeMillis
            const now = isoAt(nowMs)
            const leaseUntil = isoAt(nowMs + leaseMillis)
            const interrupted = yield* store.interruptStale(now)
            if (interrupted > 0) {
              yield* Effect.logWarning("notification deliveries interrupted by a stopped server; not sent again", {
                count: interrupted
              })
            }
            const emails = yield* store.claimEmail(now, leaseUntil, batchSize)
            yield* Effect.forEach(emails, (group) => guarded("email", sendEmail(group, nowMs)), {
              concurrency: 4,
              discard: true
            })
            const chats = yield* store.claim("chat", now, leaseUntil, batchSize)
            yield* Effect.forEach(chats, (claimed) => guarded("chat", sendChat(claimed, nowMs)), {
              concurrency: 8,
              discard: true
            })
            const pushes = push.publicKey === undefined ? [] : yield* store.claim("push", now, leaseUntil, batchSize)
            const { allowed, overBudget } = yield* withinPushBudget(pushes)
            for (const claimed of overBudget) yield* settleOne(claimed, overPushBudget)
            yield* Effect.forEach(allowed, (claimed) => guarded("push", sendPush(claimed, nowMs)), {
              concurrency: 8,
              discard: true
            })
            return emails.reduce((n, group) => n + group.length, 0) + chats.length + pushes.length
          })
        })
      })
    )
}
