import { Context, type Effect, type Scope } from "effect"

/**
 * An event for the hub, shaped as the hub's InboundEvent: `id` (a ULID, the hub's dedupe key with
 * `service`), a `type` the hub's catalog assigns to the producer, the `subject` it concerns, and `data`
 * checked against that type's schema.
 */
export interface ProducerEvent {
  readonly id: string
  readonly type: string
  readonly service: string
  readonly occurredAt: string
  readonly subject: { readonly email: string; readonly companyId?: string | undefined }
  readonly data: Readonly<Record<string, unknown>>
  readonly contractVersion: "v1"
}

/** Waiting to be sent (or sent again), acknowledged by the hub, or refused for good. */
export type OutboxStatus = "pending" | "delivered" | "failed"

/** An event in the outbox with how its delivery is going. */
export interface OutboxEntry {
  readonly event: ProducerEvent
  readonly status: OutboxStatus
  /** Attempts recorded so far. */
  readonly attempts: number
  /** When the next attempt is due (absent: at once); while a relay holds the event, the end of its lease. */
  readonly nextAttemptAt?: string
  readonly lastError?: string
  readonly lastStatusCode?: number
  /** When it was delivered or refused for good. */
  readonly completedAt?: string
}

/** What one attempt came to, as the outbox records it (core/events/ProducerRelay.ts `relayOutcome`). */
export type RelayOutcome =
  | { readonly _tag: "Delivered"; readonly at: string; readonly statusCode: number }
  | {
      readonly _tag: "Retry"
      readonly nextAttemptAt: string
      readonly error: string
      readonly statusCode?: number | undefined
    }
  | { readonly _tag: "Failed"; readonly at: string; readonly error: string; readonly statusCode?: number | undefined }

/** One attempt's outcome, for `recordAll`. */
export interface RecordedAttempt {
  readonly id: string
  readonly outcome: RelayOutcome
}

/**
 * A service's outbox of events for the hub: producers keep each event with the change that implies it (one
 * unit of work, core/kernel/Transactions.ts) and deliver it with retries until the hub acknowledges it.
 * The use cases enqueue; the relay (core/events/ProducerRelay.ts) claims due events with a lease, so two
 * servers never send one at the same time and a relay that dies mid-send leaves it to be claimed again when
 * the lease passes (at least once; the hub dedupes on service and id). Each service keeps its own outbox in
 * its own schema. Infrastructure failures are defects.
 */
export class ProducerOutbox extends Context.Service<
  ProducerOutbox,
  {
    /**
     * Adds an event, due at once; an id already present is kept as it was (so a replay adds nothing). Inside a
     * unit of work the row may be written only at the unit's end (core/kernel/Transactions.ts).
     */
    readonly enqueue: (event: ProducerEvent) => Effect.Effect<void>
    /** Events neither delivered nor refused for good, oldest first. */
    readonly pending: (limit: number) => Effect.Effect<ReadonlyArray<ProducerEvent>>
    /** Pending events due at `nowIso`, oldest first, each held until `leaseUntilIso`. */
    readonly claimDue: (
      nowIso: string,
      leaseUntilIso: string,
      limit: number
    ) => Effect.Effect<ReadonlyArray<OutboxEntry>>
    /**
     * Counts an attempt and writes its outcome. Only a pending event changes: an outcome arriving after the
     * event was delivered or refused (a relay whose lease had passed) is ignored.
     */
    readonly record: (id: string, outcome: RelayOutcome) => Effect.Effect<void>
    /**
     * `record` for a relay pass's attempts at once, each as `record` would write it; the deliveries, the
     * common case, in one statement where the store can.
     */
    readonly recordAll: (attempts: ReadonlyArray<RecordedAttempt>) => Effect.Effect<void>
    readonly get: (id: string) => Effect.Effect<OutboxEntry | undefined>
    /**
     * Waits until an event was enqueued, or `millis` pass, whichever is first: the relay's sleep between
     * passes. An event enqueued in a unit of work wakes it once the unit has committed (never before, so the
     * relay finds it); on a Postgres server, relays on every instance wake. Only a hint: the relay sends
     * what is due after `millis` anyway (retries come due with time, and a wake-up may be lost).
     */
    readonly awaitEnqueued: (millis: number) => Effect.Effect<void>
    /**
     * Hand-overs to this instance's relay (core/kernel/HandOver.ts), for as long as the scope lasts: an event
     * enqueued meanwhile is stored held by this instance until `leaseMillis` from now, and once its unit has
     * committed it waits in memory for `takeHandedOver` (and wakes the relay), so the relay sends it without
     * claiming it; no other instance is woken for it. At the scope's end what was not taken goes back, due at
     * once; a hand-over lost to a crash is claimed by any relay once its lease has passed.
     */
    readonly openHandOver: (leaseMillis: number) => Effect.Effect<void, never, Scope.Scope>
    /** Up to `limit` of the events handed over, oldest first, each as `claimDue` would have answered it. */
    readonly takeHandedOver: (limit: number) => Effect.Effect<ReadonlyArray<OutboxEntry>>
  }
>()("core/events/ProducerOutbox") {}
