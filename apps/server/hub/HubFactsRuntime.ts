import { Effect, Layer } from "effect"
import { ProducerOutbox } from "../../../core/events/ProducerOutbox.ts"
import { defaultRelayLeaseMillis, ProducerRelay } from "../../../core/events/ProducerRelay.ts"
import { FactOutbox, FactPublisher, factRetryPolicy } from "../../../core/hub/HubFacts.ts"
import { makeSpacedPasses, workerPassSpacingMillis } from "../../../core/kernel/Passes.ts"

const batchSize = 50

export interface HubFactRelayConfig {
  /** How often the outbox is looked in besides the wake-ups (`HUB_WORKER_POLL_MS`). */
  readonly pollMillis: number
  /** Seconds between attempts at a fact a service did not accept (`HUB_FACT_RETRY_SCHEDULE`); the last repeats. */
  readonly retrySchedule: ReadonlyArray<number>
  /** How long a claimed fact is held before another relay may send it; 5 minutes unless given. */
  readonly leaseMillis?: number | undefined
}

/**
 * Sends the hub's facts to the services (core/hub/HubFacts.ts): the relay of a producer's outbox over the
 * hub's fact outbox, woken when a change commits facts (on every instance of a Postgres server) and every
 * `pollMillis`, each fact signed with its service's signing key. Facts are claimed with leases, so several
 * servers relay side by side; a fact a service did not accept is retried until it does (`factRetryPolicy`).
 * Needs the hub's fact outbox and registry, and `ServiceCalls` (the hub's guarded calls to services).
 */
export const HubFactRelay = (config: HubFactRelayConfig) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const relay = yield* ProducerRelay
      const outbox = yield* FactOutbox
      // A full batch says more may be due: relay again before sleeping.
      const drain = Effect.gen(function* () {
        while ((yield* relay.relayDue(batchSize)) >= batchSize) {
          /* more may be due */
        }
      })
      const spaced = makeSpacedPasses(workerPassSpacingMillis)
      const relayLoop = spaced(drain).pipe(
        Effect.catchCause((cause) => Effect.logWarning("fact relay failed; retrying", cause)),
        Effect.andThen(outbox.awaitEnqueued(config.pollMillis)),
        Effect.forever
      )
      yield* outbox
        .openHandOver(config.leaseMillis ?? defaultRelayLeaseMillis)
        .pipe(Effect.andThen(relayLoop), Effect.annotateLogs({ worker: "facts" }), Effect.forkScoped)
    })
  ).pipe(
    Layer.provide(
      ProducerRelay.layer({
        leaseMillis: config.leaseMillis,
        // While facts are handed over, retries and a crashed relay's facts are looked for once a poll.
        claimEveryMillis: config.pollMillis,
        retryPolicy: factRetryPolicy(config.retrySchedule),
        peer: "The service"
      })
    ),
    Layer.provide(FactPublisher),
    Layer.provide(Layer.effect(ProducerOutbox, Effect.service(FactOutbox)))
  )
