import { Clock, Context, Effect, Layer, Random, Result } from "effect"
import { Hub } from "../kernel/Limits.ts"
import {
  doubling,
  retryAfterSeconds,
  retryDelaySeconds as policyDelay,
  statusVerdict,
  type RetryPolicy
} from "../kernel/RetryPolicy.ts"
import { makeClaimPacing } from "../kernel/HandOver.ts"
import { isoAt } from "../kernel/Timestamp.ts"
import { ProducerOutbox, type OutboxEntry, type RelayOutcome } from "./ProducerOutbox.ts"
import { HubEventPublisher, type HubAnswer, type HubPublishFailed } from "./HubEventPublisher.ts"

/**
 * The producer outbox's retry policy (the hub's rule: "a backoff schedule from 60 seconds up to 12 hours"):
 * 60 s doubling at each attempt, plus up to 10% jitter, never less than the hub's `Retry-After`, never over
 * 12 hours, without end; a 1xx or 3xx answer is retried.
 */
export const producerRetryPolicy: RetryPolicy = {
  baseDelaySeconds: doubling(Hub.eventRedeliveryMinSeconds),
  jitterShare: 0.1,
  minSeconds: Hub.eventRedeliveryMinSeconds,
  maxSeconds: Hub.eventRedeliveryMaxSeconds,
  otherStatuses: "retry"
}

/** Seconds before the retry that follows `attemptsBefore` failed attempts (`producerRetryPolicy`; `jitter` in [0, 1)). */
export const retryDelaySeconds = (attemptsBefore: number, jitter: number, retryAfter?: number | undefined): number =>
  policyDelay(producerRetryPolicy, attemptsBefore, jitter, retryAfter) ?? Hub.eventRedeliveryMaxSeconds

export interface AttemptContext {
  /** Attempts recorded before this one. */
  readonly attemptsBefore: number
  readonly nowMs: number
  /** In [0, 1). */
  readonly jitter: number
}

/**
 * What one attempt comes to: any 2xx is delivered (a duplicate answers 200);
 * a 4xx other than 408 and 429 (the hub's quota answer says "retry with backoff") is permanent, never retried; everything else (408, 429, 5xx, a timeout, no
 * connection, and the 1xx/3xx the spec does not name) is retried after `retryDelaySeconds`. A transient
 * failure never gives up: producers "deliver with retries until acknowledged", and at the 12-hour cap
 * a waiting event costs two attempts a day, so an outage of any length loses nothing.
 */
export const relayOutcome = (
  answer: Result.Result<HubAnswer, HubPublishFailed>,
  context: AttemptContext,
  policy: RetryPolicy = producerRetryPolicy,
  peer = "The hub"
): RelayOutcome => {
  const at = isoAt(context.nowMs)
  const retry = (error: string, statusCode: number | undefined, retryAfter: number | undefined): RelayOutcome => ({
    _tag: "Retry",
    nextAttemptAt: isoAt(
      context.nowMs +
        Math.round(
          (policyDelay(policy, context.attemptsBefore, context.jitter, retryAfter) ?? policy.maxSeconds) * 1000
        )
    ),
    error,
    statusCode
  })
  if (Result.isFailure(answer)) return retry(answer.failure.message, undefined, undefined)
  const { status } = answer.success
  const verdict = statusVerdict(policy, status)
  if (verdict === "delivered") return { _tag: "Delivered", at, statusCode: status }
  const error = `${peer} answered ${status}.`
  if (verdict === "permanent") return { _tag: "Failed", at, error, statusCode: status }
  return retry(error, status, retryAfterSeconds(answer.success.retryAfter, context.nowMs))
}

/** How long a relay holds an event it claimed (or was handed) before another may send it, unless configured. */
export const defaultRelayLeaseMillis = 5 * 60_000

export interface ProducerRelayConfig {
  /** Events sent at once. Default 4. */
  readonly concurrency?: number | undefined
  /**
   * How long a claimed event is held before another relay may send it. It must outlast a whole batch
   * (batch / concurrency × the publisher's timeout); default 5 minutes.
   */
  readonly leaseMillis?: number | undefined
  /**
   * While events are handed over, how seldom the outbox is also asked for other due events (a retry come due,
   * an event a crashed relay held): a pass with events handed over claims only if this long has passed since
   * the last claim. A pass with none handed over always claims. Default 0: every pass claims.
   */
  readonly claimEveryMillis?: number | undefined
  /** How a failed attempt is retried; `producerRetryPolicy` unless given (the hub's facts have their own). */
  readonly retryPolicy?: RetryPolicy | undefined
  /** Who is sent to, as the outcomes and logs name it: "The hub" unless given. */
  readonly peer?: string | undefined
}

/**
 * Relays a service's outbox to the hub: takes the events handed over to it (`takeHandedOver`), claims the
 * other due events with a lease, publishes each through the HubEventPublisher port, and records the outcomes
 * of a pass together (`relayOutcome`, `recordAll`). An event is sent at least once: a relay that dies
 * mid-send leaves it to be claimed again when its lease passes, and the hub dedupes on its id.
 * A permanent refusal is logged at error level: that is the alert a 4xx raises.
 */
export class ProducerRelay extends Context.Service<
  ProducerRelay,
  {
    /** Sends every event due now (up to `batch`, 50 by default); answers how many the hub acknowledged. */
    readonly relayDue: (batch?: number | undefined) => Effect.Effect<number>
  }
>()("core/events/ProducerRelay") {
  static readonly layer = (
    config: ProducerRelayConfig = {}
  ): Layer.Layer<ProducerRelay, never, ProducerOutbox | HubEventPublisher> => Layer.effect(ProducerRelay, make(config))
}

const make = (config: ProducerRelayConfig) =>
  Effect.gen(function* () {
    const outbox = yield* ProducerOutbox
    const publisher = yield* HubEventPublisher
    const concurrency = config.concurrency ?? 4
    const peer = config.peer ?? "The hub"
    const leaseMillis = config.leaseMillis ?? defaultRelayLeaseMillis
    const claims = makeClaimPacing(config.claimEveryMillis ?? 0)

    const relayOne = Effect.fnUntraced(function* (entry: OutboxEntry) {
      const answer = yield* Effect.result(publisher.publish(entry.event))
      const outcome = relayOutcome(
        answer,
        { attemptsBefore: entry.attempts, nowMs: yield* Clock.currentTimeMillis, jitter: yield* Random.next },
        config.retryPolicy,
        peer
      )
      const about = { eventId: entry.event.id, eventType: entry.event.type, attempt: entry.attempts + 1 }
      if (outcome._tag === "Failed") {
        yield* Effect.logError(`${peer} refused an event for good; it will not be sent again.`, outcome.error).pipe(
          Effect.annotateLogs(about)
        )
      } else if (outcome._tag === "Retry") {
        yield* Effect.logWarning(
          `An event could not be delivered to ${peer.toLowerCase()}; it will be retried.`,
          outcome.error
        ).pipe(Effect.annotateLogs({ ...about, nextAttemptAt: outcome.nextAttemptAt }))
      }
      return { id: entry.event.id, outcome }
    })

    /** Sends every event due now (up to `batch`); answers how many the hub acknowledged. */
    const relayDue = Effect.fn("ProducerRelay.relayDue")(function* (batch: number = 50) {
      const now = yield* Clock.currentTimeMillis
      // What this instance enqueued while the relay took hand-overs is held for it already; the rest is claimed.
      const handed = yield* outbox.takeHandedOver(batch)
      const claimed = claims(handed.length, batch, now)
        ? yield* outbox.claimDue(isoAt(now), isoAt(now + leaseMillis), batch - handed.length)
        : []
      const attempts = yield* Effect.forEach([...handed, ...claimed], relayOne, { concurrency })
      // The pass's outcomes written together, once every attempt has its answer. A relay that dies before
      // this leaves its events claimed: they are sent again after the lease, and the hub dedupes them.
      yield* outbox.recordAll(attempts)
      return attempts.filter((attempt) => attempt.outcome._tag === "Delivered").length
    })

    return ProducerRelay.of({ relayDue })
  })
