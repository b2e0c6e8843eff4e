import { Context, type Effect } from "effect"
import type { Notification } from "./NotificationStore.ts"

/** One user's pending notifications, sent together as one email. */
export interface EmailBatch {
  readonly userId: string
  readonly email: string
  /** Oldest first. */
  readonly items: ReadonlyArray<Notification>
}

/**
 * The batched email channel's queue (document 1, "Events" 3: "batched email"): notifications wait here
 * until the batcher sends each user one email with all of theirs. Infrastructure failures are defects.
 */
export class EmailQueue extends Context.Service<
  EmailQueue,
  {
    /** Queues the notification once (keyed by its id); false when it was queued before. */
    readonly enqueue: (notification: Notification) => Effect.Effect<boolean>
    /**
     * Claims every unsent item of up to `maxUsers` users whose items are not leased, holding them until
     * `leaseUntilIso`; answers one batch per user. A batcher that dies before `markSent` leaves them to be
     * claimed again after the lease.
     */
    readonly claim: (
      nowIso: string,
      leaseUntilIso: string,
      maxUsers: number
    ) => Effect.Effect<ReadonlyArray<EmailBatch>>
    readonly markSent: (notificationIds: ReadonlyArray<string>, atIso: string) => Effect.Effect<void>
    /** Items not yet sent for the user (operators, tests). */
    readonly pending: (userId: string) => Effect.Effect<ReadonlyArray<Notification>>
  }
>()("core/hub/EmailQueue") {}
