import { Effect, Layer, Redacted, Schedule } from "effect"
import { HubEventPublisherHttp, hubCatalogLists } from "../../adapters/http/HubEventPublisherHttp.ts"
import type { HubEventPublisher } from "../../core/events/HubEventPublisher.ts"
import type { IdGenerator } from "../../core/kernel/Ids.ts"
import { ProducerOutbox } from "../../core/events/ProducerOutbox.ts"
import { defaultRelayLeaseMillis, ProducerRelay } from "../../core/events/ProducerRelay.ts"
import { makeSpacedPasses, workerPassSpacingMillis } from "../../core/kernel/Passes.ts"

const batchSize = 50

/**
 * Events of one pass handed over at once. Over HTTP, four at a time (requests to another server). To the hub
 * in the same process, the whole pass together: its events then share the hub's quota step and one insert
 * (the ingest gathers concurrent deliveries), instead of a statement or two per four events.
 */
export const relayConcurrency = (inProcess: boolean): number => (inProcess ? batchSize : 4)

/** How a service's relay reaches the hub: configured per service (`HUB_URL`, its signing key, `EVENT_RELAY_*`). */
export interface RelaySettings {
  readonly hubUrl: string
  readonly signingKey: Redacted.Redacted<string> | undefined
  readonly pollMillis: number
  /** How long a claimed event is held before another relay (or this one after a restart) may send it. */
  readonly leaseMillis?: number | undefined
}

/** Hands a producer's events, signed with its key, to a hub in the same process (the bundled server's). */
export type InProcessHub<E, R> = (signingKey: Redacted.Redacted<string>) => Layer.Layer<HubEventPublisher, E, R>

/**
 * Relays one service's event outbox (its ProducerOutbox) to the hub right after an event is enqueued (the
 * outbox wakes it once the unit of work has committed, on any instance) and every `pollMillis`, each event signed
 * with the service's own signing key. Events are claimed with leases in the database, so several servers
 * may relay side by side. Without a signing key nothing is sent (the hub would refuse it): the events wait
 * in the outbox, nothing is lost, and they go out once the key is configured.
 *
 * The relay begins once the hub's catalog lists the producer's notification type: before that (the hub still
 * starting, the service not registered yet) a delivery would be refused, and a refusal is final. Until then
 * the events wait in the outbox.
 *
 * Events go over HTTP to `hubUrl`, unless `publisher` gives another way to the same hub (the bundled server
 * hands them to its own hub in process: adapters/http/HubEventPublisherInProcess.ts).
 */
export const ProducerRelayWorker = <E = never, R = never>(
  options: RelaySettings & {
    /** The producer's service id, for the logs. */
    readonly service: string
    /** The setting that holds its signing key, named in the warning when it is unset. */
    readonly keySetting: string
    /** The type whose presence in the hub's catalog says the hub will take this producer's events. */
    readonly notificationType: string
    readonly publisher?: InProcessHub<E, R> | undefined
  }
) =>
  options.signingKey === undefined
    ? Layer.effectDiscard(
        Effect.logWarning(
          `${options.keySetting} is not set: ${options.service} events wait in the outbox and are not sent to the hub.`
        )
      )
    : Layer.effectDiscard(
        Effect.gen(function* () {
          const relay = yield* ProducerRelay
          const outbox = yield* ProducerOutbox
          const hubReady = hubCatalogLists({
            hubUrl: options.hubUrl,
            service: options.service,
            type: options.notificationType
          }).pipe(
            Effect.flatMap((ready) => (ready ? Effect.void : Effect.fail("not yet"))),
            // The hub is usually up within a second: a long poll interval need not delay the first relay.
            Effect.retry(Schedule.spaced(Math.min(options.pollMillis, 1_000)))
          )
          // A full batch says more may be due: relay again before sleeping.
          const drain = Effect.gen(function* () {
            while ((yield* relay.relayDue(batchSize)) >= batchSize) {
              /* more may be due */
            }
          })
          const spaced = makeSpacedPasses(workerPassSpacingMillis)
          const relayLoop = spaced(drain).pipe(
            Effect.catchCause((cause) => Effect.logWarning("event relay failed; retrying", cause)),
            Effect.andThen(outbox.awaitEnqueued(options.pollMillis)),
            Effect.forever
          )
          yield* hubReady.pipe(
            // From its first pass on, what this instance enqueues is handed to it in memory.
            Effect.andThen(outbox.openHandOver(options.leaseMillis ?? defaultRelayLeaseMillis)),
            Effect.andThen(relayLoop),
            Effect.annotateLogs({ producer: options.service }),
            Effect.forkScoped
          )
        })
      ).pipe(
        Layer.provide(
          ProducerRelay.layer({
            leaseMillis: options.leaseMillis,
            // While events are handed over, retries and a crashed relay's events are looked for once a poll.
            claimEveryMillis: options.pollMillis,
            concurrency: relayConcurrency(options.publisher !== undefined)
          })
        ),
        Layer.provide(publisherLayer(options.hubUrl, options.signingKey, options.publisher))
      )

const publisherLayer = <E, R>(
  hubUrl: string,
  signingKey: Redacted.Redacted<string>,
  publisher: ((signingKey: Redacted.Redacted<string>) => Layer.Layer<HubEventPublisher, E, R>) | undefined
): Layer.Layer<HubEventPublisher, E, R | IdGenerator> =>
  publisher === undefined ? HubEventPublisherHttp({ hubUrl, signingKey }) : publisher(signingKey)
