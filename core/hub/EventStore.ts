import { Context, type Effect } from "effect"

/**
 * Accepted events: acceptance is a committed row, keyed by the
 * pair (producer service, event id). A row starts `accepted` and is processed after the acknowledgement;
 * `failed` is an event whose processing kept failing past the processor's attempt limit (kept, logged).
 */
export const EventStatuses = ["accepted", "processed", "failed"] as const
export type EventStatus = (typeof EventStatuses)[number]

export interface EventSubject {
  readonly email: string
  readonly companyId?: string | undefined
}

export interface StoredEvent {
  readonly service: string
  readonly id: string
  readonly type: string
  readonly occurredAt: string
  readonly subject: EventSubject
  readonly data: unknown
  /** `X-Platform-Delivery` of the attempt that was accepted. */
  readonly deliveryId: string
  readonly receivedAt: string
  readonly status: EventStatus
  /** Claims so far: a processor that dies mid-event leaves it to be claimed again after its lease. */
  readonly attempts: number
  readonly processedAt: string | null
}

export interface NewEvent extends Omit<StoredEvent, "status" | "attempts" | "processedAt"> {
  /**
   * Nothing is left to do after the acknowledgement (a type that is not a notification): the event is stored
   * `processed` at its receipt, so no processor ever claims it. Default false: stored `accepted`.
   */
  readonly processed?: boolean | undefined
  /**
   * Stored already claimed by the one storing it, until this instant: its first attempt counted, claimed by
   * no processor before then (EventHandOver: ingest hands it to its own processor in memory). Ignored for an
   * event stored `processed`.
   */
  readonly claimedUntil?: string | undefined
}

/** The event store port. Infrastructure failures are defects. */
export class EventStore extends Context.Service<
  EventStore,
  {
    /**
     * Stores the event unless (service, id) is stored: `new` only once the row is committed. Atomic. Stored
     * `accepted`, or `processed` at `receivedAt` when `processed` is set; with `claimedUntil`, accepted and
     * claimed until then (one attempt).
     */
    readonly insert: (event: NewEvent) => Effect.Effect<"new" | "duplicate">
    /**
     * Claims up to `limit` accepted events whose lease has passed (oldest first), holding each until
     * `leaseUntilIso` and counting the attempt, so processors on several servers never take the same one.
     */
    readonly claim: (nowIso: string, leaseUntilIso: string, limit: number) => Effect.Effect<ReadonlyArray<StoredEvent>>
    readonly finish: (service: string, id: string, status: "processed" | "failed", atIso: string) => Effect.Effect<void>
    /**
     * Gives back events stored claimed (`claimedUntil`) and never processed, when their hand-over is given up
     * (core/hub/EventHandOver.ts): unclaimed and their attempt uncounted, for any processor's next claim. An
     * event no longer in that state (processed, or claimed again) is left as it is.
     */
    readonly release: (keys: ReadonlyArray<{ readonly service: string; readonly id: string }>) => Effect.Effect<void>
    /** `finish` for many events at once (one statement on SQL). */
    readonly finishAll: (
      keys: ReadonlyArray<{ readonly service: string; readonly id: string }>,
      status: "processed" | "failed",
      atIso: string
    ) => Effect.Effect<void>
    readonly find: (service: string, id: string) => Effect.Effect<StoredEvent | undefined>
    /** The service's events, newest received first. */
    readonly list: (service: string, limit: number) => Effect.Effect<ReadonlyArray<StoredEvent>>
  }
>()("core/hub/EventStore") {}
