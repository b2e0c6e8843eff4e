import { Effect, Layer, Schedule } from "effect"
import { Decisions } from "../../../core/decisions/Decisions.ts"
import { Escalations } from "../../../core/decisions/Escalations.ts"
import { RecordActions } from "../../../core/decisions/RecordActions.ts"
import { WebhookDeliveries } from "../../../core/decisions/WebhookDeliveries.ts"
import { ProducerRelayWorker, type InProcessHub, type RelaySettings } from "../ProducerRelayRuntime.ts"
import { purgeIdempotency } from "../Maintenance.ts"

/**
 * Writes expiry of due decisions every `everyMillis` and wakes their long-polling readers. Reads never
 * depend on it (they apply expiry themselves); it makes the stored state, lists and webhooks catch up.
 */
export const ExpirySweep = (everyMillis: number) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const decisions = yield* Decisions
      yield* decisions.expireDue().pipe(
        Effect.catchCause((cause) => Effect.logWarning("expiry sweep failed; retrying", cause)),
        Effect.repeat(Schedule.spaced(everyMillis)),
        Effect.forkScoped
      )
    })
  )

/**
 * The background workers of the decisions service, each polling every `everyMillis`: record actions that
 * are due, the webhook outbox, and escalation steps that are due. Work is claimed with leases in the database, so several servers may run
 * them side by side, and a server killed mid-work leaves nothing lost (it is claimed again later).
 */
export const DecisionsWorkers = (everyMillis: number) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const actions = yield* RecordActions
      const deliveries = yield* WebhookDeliveries
      const escalations = yield* Escalations
      const repeatedly = <A, E>(name: string, work: Effect.Effect<A, E>) =>
        work.pipe(
          Effect.catchCause((cause) => Effect.logWarning(`${name} failed; retrying`, cause)),
          Effect.repeat(Schedule.spaced(everyMillis)),
          Effect.forkScoped
        )
      yield* repeatedly("record actions", actions.runDue())
      yield* repeatedly("webhook deliveries", deliveries.deliverDue())
      yield* repeatedly("escalations", escalations.runDue())
    })
  )

/**
 * Relays the decisions service's event outbox to the hub, signed with DECISIONS_SIGNING_KEY: the
 * notifications of docs/notifications.md, "What services emit".
 */
export const DecisionsEventRelay = <E = never, R = never>(
  options: RelaySettings & { readonly publisher?: InProcessHub<E, R> | undefined }
) =>
  ProducerRelayWorker({
    service: "decisions",
    keySetting: "DECISIONS_SIGNING_KEY",
    notificationType: "decisions.notification.created",
    ...options
  })

export interface DecisionsWorkerSettings {
  /** How often due decisions are expired (`DECISIONS_EXPIRY_SWEEP_MS`). */
  readonly expirySweepMillis: number
  /** How often record actions and webhook deliveries are looked for (`DECISIONS_WORKER_POLL_MS`). */
  readonly workerPollMillis: number
  /** The relay of the event outbox to the hub (`HUB_URL`, `DECISIONS_SIGNING_KEY`, `EVENT_RELAY_*`). */
  readonly relay: RelaySettings
}

/**
 * Everything the decisions service runs in the background, one line per worker: expiry, record actions and
 * webhook deliveries, the relay of its events to the hub (over HTTP, or handed to `publisher` when the hub
 * runs in the same process), and the purge of old idempotency records. Each claims its work in the database,
 * so every instance runs them all side by side.
 */
export const DecisionsBackground = <E = never, R = never>(
  settings: DecisionsWorkerSettings,
  publisher?: InProcessHub<E, R> | undefined
) =>
  Layer.mergeAll(
    ExpirySweep(settings.expirySweepMillis),
    DecisionsWorkers(settings.workerPollMillis),
    DecisionsEventRelay({ ...settings.relay, publisher }),
    purgeIdempotency
  )
