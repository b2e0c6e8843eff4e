import { Context, type Effect } from "effect"

/** One email waiting to be sent; `sealed` is the message sealed with the hub's secrets key. */
export interface OutgoingMail {
  readonly id: string
  readonly sealed: string
  /** Attempts made before this claim. */
  readonly attempts: number
}

/**
 * The hub's mail outbox port: an email is written here in the unit of work that decides to send it and a
 * worker delivers it (core/hub/MailDeliveries.ts), so a crash neither loses nor repeats an acknowledged
 * request's email. Infrastructure failures are defects.
 */
export class MailOutbox extends Context.Service<
  MailOutbox,
  {
    readonly enqueue: (mail: {
      readonly id: string
      readonly sealed: string
      readonly createdAt: string
    }) => Effect.Effect<void>
    /**
     * Claims up to `max` due messages (not sent, not given up, next attempt at or before `now`, not leased),
     * leasing them until `leaseUntil`; a worker that dies leaves them to be claimed again after the lease.
     */
    readonly claim: (now: string, leaseUntil: string, max: number) => Effect.Effect<ReadonlyArray<OutgoingMail>>
    /** Sent: the sealed message is forgotten. */
    readonly markSent: (id: string, at: string) => Effect.Effect<void>
    /** A transient failure: try again at `nextAttemptAt`, counting one more attempt. */
    readonly retryAt: (id: string, nextAttemptAt: string) => Effect.Effect<void>
    /** Given up (a permanent refusal, or too many attempts): the sealed message is forgotten. */
    readonly markFailed: (id: string, at: string) => Effect.Effect<void>
    /** Messages neither sent nor given up (operators, tests). */
    readonly pendingCount: () => Effect.Effect<number>
  }
>()("core/hub/MailOutbox") {}
