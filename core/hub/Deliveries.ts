import { Context, type Effect } from "effect"
import {
  maxRetryWaitSeconds,
  nextAttemptAt,
  scheduled,
  statusVerdict,
  type RetryPolicy
} from "../kernel/RetryPolicy.ts"
import type { Notification } from "./NotificationStore.ts"

/** The channels that leave the hub. The bell is the feed itself (NotificationStore). */
export const DeliveryChannels = ["email", "chat", "push"] as const
export type DeliveryChannel = (typeof DeliveryChannels)[number]

/**
 * - `pending`: waiting for `nextAttemptAt` (the first attempt, a retry, or the person's next digest).
 * - `sending`: claimed by a worker; the claim is the attempt, committed before anything is sent.
 * - `sent`: the peer accepted it. `failed`: refused for good, or out of retries.
 * - `cancelled`: nothing to send to any more (the push subscription is gone, the chat webhook removed).
 * - `interrupted`: the server that claimed it stopped before it knew the outcome; never sent again, so that
 *   nobody gets a notification twice (it may or may not have arrived).
 */
export const DeliveryStatuses = ["pending", "sending", "sent", "failed", "cancelled", "interrupted"] as const
export type DeliveryStatus = (typeof DeliveryStatuses)[number]

/** One channel's delivery of one notification: the outbox row and its log. */
export interface Delivery {
  /** `<notification id>/<channel>`, with `/<target>` for push: a notification is queued once per target. */
  readonly id: string
  readonly notificationId: string
  readonly userId: string
  readonly channel: DeliveryChannel
  /** Push: the subscription's id. Chat: `person` or `org:<id>` (whose webhook). Email: empty. */
  readonly target: string
  readonly status: DeliveryStatus
  readonly attempts: number
  readonly nextAttemptAt: string
  /** A user-safe reason of the last failure. */
  readonly lastError: string | null
  readonly createdAt: string
  readonly sentAt: string | null
}

export interface NewDelivery {
  /** Set when the row is shared by several notifications (an organization's chat channel); else derived. */
  readonly id?: string | undefined
  readonly notificationId: string
  readonly userId: string
  readonly channel: DeliveryChannel
  readonly target: string
  readonly nextAttemptAt: string
  readonly createdAt: string
}

export const deliveryId = (d: Pick<NewDelivery, "id" | "notificationId" | "channel" | "target">): string =>
  d.id !== undefined
    ? d.id
    : d.channel === "push"
      ? `${d.notificationId}/push/${d.target}`
      : `${d.notificationId}/${d.channel}`

/** A claimed delivery with what it carries. */
export interface ClaimedDelivery {
  readonly delivery: Delivery
  readonly notification: Notification
}

/** How a claimed delivery ended: every one of them ends in exactly one of these. */
export type DeliveryOutcome =
  | { readonly status: "sent"; readonly atIso: string }
  | { readonly status: "pending"; readonly nextAttemptAt: string; readonly error: string }
  | { readonly status: "failed" | "cancelled"; readonly error: string }

/**
 * The outbox of the channels (docs/notifications.md). Claims take rows with `FOR UPDATE SKIP LOCKED` and
 * move them to `sending` with the attempt counted in the same statement, so two workers never take the same
 * row and a row is never handed out twice. Infrastructure failures are defects.
 */
export class DeliveryStore extends Context.Service<
  DeliveryStore,
  {
    /** Queues each delivery unless one with its id exists; meant for the unit that files the notification. */
    readonly enqueue: (deliveries: ReadonlyArray<NewDelivery>) => Effect.Effect<void>
    /**
     * Up to `maxUsers` people with an email delivery due: for each, every pending email delivery (due or
     * still waiting for the digest), claimed until `leaseUntilIso`. One group per person, oldest first.
     */
    readonly claimEmail: (
      nowIso: string,
      leaseUntilIso: string,
      maxUsers: number
    ) => Effect.Effect<ReadonlyArray<ReadonlyArray<ClaimedDelivery>>>
    /** Up to `limit` due deliveries of a chat or push channel, claimed until `leaseUntilIso`, oldest first. */
    readonly claim: (
      channel: "chat" | "push",
      nowIso: string,
      leaseUntilIso: string,
      limit: number
    ) => Effect.Effect<ReadonlyArray<ClaimedDelivery>>
    /** Records how the claimed deliveries ended (only rows still `sending` or `interrupted` change). */
    readonly settle: (ids: ReadonlyArray<string>, outcome: DeliveryOutcome) => Effect.Effect<void>
    /** Marks `interrupted` every delivery left `sending` past its lease; answers how many. */
    readonly interruptStale: (nowIso: string) => Effect.Effect<number>
    /**
     * The attempts counted so far (claims included, whatever became of them) of each notification's deliveries
     * on one channel, summed over its targets; a notification with none is missing from the map.
     */
    readonly attemptsOf: (
      channel: DeliveryChannel,
      notificationIds: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyMap<string, number>>
    /** Cancels the pending deliveries to one target (a push subscription that was removed). */
    readonly cancelTarget: (channel: DeliveryChannel, target: string, reason: string) => Effect.Effect<void>
    /** The user's delivery log, newest first (operators). */
    readonly forUser: (userId: string, limit: number) => Effect.Effect<ReadonlyArray<Delivery>>
  }
>()("core/hub/DeliveryStore") {}

/**
 * The channels' retry policy (`HUB_DELIVERY_RETRY_SCHEDULE`): the schedule's next wait plus up to a quarter of
 * it, so deliveries refused together (a chat service down) do not come back together, never over twelve
 * hours, until the schedule runs out; an answer that is neither 2xx, 4xx nor 5xx is permanent.
 */
export const deliveryRetryPolicy = (schedule: ReadonlyArray<number>): RetryPolicy => ({
  baseDelaySeconds: scheduled(schedule),
  jitterShare: 0.25,
  minSeconds: 0,
  maxSeconds: maxRetryWaitSeconds,
  otherStatuses: "permanent"
})

/** What a chat webhook's or push service's answer means: delivered, worth another attempt, or refused for good. */
export const channelStatusVerdict = (status: number): "delivered" | "retry" | "permanent" =>
  statusVerdict(deliveryRetryPolicy([]), status)

/**
 * When a failed attempt is tried again (ISO time): `attempts` counts the attempt that failed, so the nth
 * attempt waits the schedule's nth step, jittered by `jitter` in [0, 1) (it comes from the edge, like the
 * time); undefined once the schedule is spent (the delivery has failed).
 */
export const retryAt = (
  schedule: ReadonlyArray<number>,
  context: { readonly attempts: number; readonly nowMs: number; readonly jitter: number }
): string | undefined =>
  nextAttemptAt(deliveryRetryPolicy(schedule), {
    attemptsBefore: context.attempts - 1,
    nowMs: context.nowMs,
    jitter: context.jitter
  })
