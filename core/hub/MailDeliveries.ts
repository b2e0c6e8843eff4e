import { Clock, Context, Effect, Latch, Layer, Random } from "effect"
import { open, seal } from "../auth/SecretBox.ts"
import { NotConfigured } from "../kernel/Errors.ts"
import { IdGenerator } from "../kernel/Ids.ts"
import { maxRetryWaitSeconds, nextAttemptAt, scheduled, type RetryPolicy } from "../kernel/RetryPolicy.ts"
import { Mailer, type MailMessage } from "../kernel/Mailer.ts"
import { isoAt } from "../kernel/Timestamp.ts"
import { Transactions } from "../kernel/Transactions.ts"
import { MailOutbox, type OutgoingMail } from "./MailOutbox.ts"

export interface MailDeliveriesConfig {
  /** `HUB_SECRETS_KEY`: messages are sealed with it at rest. Without it nothing is queued (fails closed). */
  readonly secretsKey: string | undefined
  /** Seconds before each retry of a transient failure; after the last one the message is given up. */
  readonly retrySeconds?: ReadonlyArray<number> | undefined
  /** How long a worker holds the messages it claimed. Longer than a send takes. */
  readonly leaseMillis?: number | undefined
}

/** A sign-in link lives 15 minutes, so retries are quick; a later one still serves other mail. */
export const defaultMailRetrySeconds: ReadonlyArray<number> = [5, 30, 120, 600, 3600]

/**
 * The mail outbox's retry policy: the schedule's next wait plus up to a quarter of it, so messages a mail
 * server turned away together do not all come back at once, never over twelve hours, until the schedule runs
 * out. A mail server answers no HTTP status; its refusals are permanent or transient (core/kernel/Mailer.ts).
 */
export const mailRetryPolicy = (schedule: ReadonlyArray<number>): RetryPolicy => ({
  baseDelaySeconds: scheduled(schedule),
  jitterShare: 0.25,
  minSeconds: 0,
  maxSeconds: maxRetryWaitSeconds,
  otherStatuses: "permanent"
})

const claimSize = 20

/**
 * Email through the outbox. `enqueue` writes the sealed message in the caller's unit of work and wakes the
 * worker once it commits; `runDue` claims due messages, sends each with the Mailer, and records the outcome:
 * sent, retried later (a transient failure), or given up (a permanent refusal, or retries exhausted).
 */
export class MailDeliveries extends Context.Service<
  MailDeliveries,
  {
    /** False without a secrets key: nothing can be queued. */
    readonly configured: boolean
    readonly enqueue: (message: MailMessage) => Effect.Effect<void, NotConfigured>
    /** Sends what is due; answers how many messages it handled. */
    readonly runDue: () => Effect.Effect<number>
    /** Waits until a message is queued here or `millis` pass, whichever is first. */
    readonly sleep: (millis: number) => Effect.Effect<void>
  }
>()("core/hub/MailDeliveries") {
  static readonly layer = (
    config: MailDeliveriesConfig
  ): Layer.Layer<MailDeliveries, never, MailOutbox | Mailer | IdGenerator | Transactions> =>
    Layer.effect(
      MailDeliveries,
      Effect.gen(function* () {
        const outbox = yield* MailOutbox
        const mailer = yield* Mailer
        const ids = yield* IdGenerator
        const transactions = yield* Transactions
        const latch = yield* Latch.make(false)
        const policy = mailRetryPolicy(config.retrySeconds ?? defaultMailRetrySeconds)
        const leaseMillis = config.leaseMillis ?? 120_000

        const deliver = Effect.fn("MailDeliveries.deliver")(function* (mail: OutgoingMail) {
          const now = yield* Clock.currentTimeMillis
          const text = config.secretsKey === undefined ? undefined : open(config.secretsKey, mail.sealed)
          if (text === undefined) {
            yield* Effect.logWarning("an outgoing email could not be opened with the secrets key; given up")
            return yield* outbox.markFailed(mail.id, isoAt(now))
          }
          const message = JSON.parse(text) as MailMessage
          const sent = yield* Effect.result(mailer.send(message))
          if (sent._tag === "Success") return yield* outbox.markSent(mail.id, isoAt(now))
          const next = sent.failure.permanent
            ? undefined
            : nextAttemptAt(policy, { attemptsBefore: mail.attempts, nowMs: now, jitter: yield* Random.next })
          if (next === undefined) {
            yield* Effect.logWarning("an email was refused or could not be sent; given up", sent.failure)
            return yield* outbox.markFailed(mail.id, isoAt(now))
          }
          yield* Effect.logInfo("an email could not be sent yet; will retry", sent.failure)
          yield* outbox.retryAt(mail.id, next)
        })

        return MailDeliveries.of({
          configured: config.secretsKey !== undefined,
          enqueue: Effect.fn("MailDeliveries.enqueue")(function* (message: MailMessage) {
            if (config.secretsKey === undefined) {
              return yield* new NotConfigured({ message: "Sending email is not configured." })
            }
            const now = yield* Clock.currentTimeMillis
            yield* outbox.enqueue({
              id: yield* ids.next,
              sealed: seal(config.secretsKey, JSON.stringify(message)),
              createdAt: isoAt(now)
            })
            yield* transactions.afterCommit(Effect.asVoid(latch.open))
          }),
          runDue: Effect.fn("MailDeliveries.runDue")(function* () {
            const now = yield* Clock.currentTimeMillis
            const due = yield* outbox.claim(isoAt(now), isoAt(now + leaseMillis), claimSize)
            yield* Effect.forEach(due, deliver, { concurrency: 4, discard: true })
            return due.length
          }),
          sleep: (millis) => latch.await.pipe(Effect.timeoutOption(millis), Effect.andThen(latch.close), Effect.asVoid)
        })
      })
    )
}
