import { Context, Effect, Layer, type Scope } from "effect"
import { makeHandOver } from "../kernel/HandOver.ts"
import { EventStore, type StoredEvent } from "./EventStore.ts"
import { EventWakeup } from "./EventWakeup.ts"

/** How long a processor holds an event it claimed before another may take it, unless configured. */
export const defaultEventLeaseMillis = 60_000

export interface EventHandOverConfig {
  /** The lease an event is stored with when it is handed over: the processor's own. Default 60 s. */
  readonly leaseMillis?: number | undefined
  /** Events handed over and not yet taken, at most; past that, new ones are stored for any processor. Default 1,000. */
  readonly maxWaiting?: number | undefined
}

/**
 * Notifications this instance's ingest hands straight to this instance's processor (core/kernel/HandOver.ts).
 * While a processor is taking them (`open`, for as long as the hub's event worker runs), ingest stores a new
 * notification already claimed: leased to this instance, its first attempt counted, so no processor anywhere
 * claims it before the lease passes. Once its row has committed the event is handed over in memory and the
 * processor woken; the processor files it without claiming it, one UPDATE of the event fewer than a claim
 * would cost.
 *
 * When the worker stops (a shutdown), what it had not taken is given back to the store, unclaimed, for any
 * processor at once. A hand-over lost to a crash costs only time: the row is an accepted event like any other,
 * and once its lease passes any processor claims it, counting a second attempt. When too many wait (a processor
 * slower than the ingest for a while), new events are stored unclaimed and the processors claim them as
 * before, so memory stays bounded. An event kept past its lease before it is taken may also be claimed by
 * another processor; filing it twice files it once (a notification per event).
 */
export class EventHandOver extends Context.Service<
  EventHandOver,
  {
    /** Takes hand-overs for as long as the scope lasts; what is left untaken at its end goes back to the store. */
    readonly open: Effect.Effect<void, never, Scope.Scope>
    /** The lease to store a new notification with, or undefined: store it unclaimed, for any processor's claim. */
    readonly leaseFor: (nowMs: number) => string | undefined
    /** Hands over an event stored with `leaseFor`'s lease, once its row has committed, and wakes the processor. */
    readonly handOver: (event: StoredEvent) => Effect.Effect<void>
    /** Up to `limit` of the events handed over, oldest first; taken once. */
    readonly take: (limit: number) => Effect.Effect<ReadonlyArray<StoredEvent>>
  }
>()("core/hub/EventHandOver") {
  static readonly layer = (config: EventHandOverConfig = {}) =>
    Layer.effect(
      EventHandOver,
      Effect.gen(function* () {
        const wakeup = yield* EventWakeup
        const store = yield* EventStore
        const leaseMillis = config.leaseMillis ?? defaultEventLeaseMillis
        const handOver = makeHandOver<StoredEvent>({
          maxWaiting: config.maxWaiting ?? 1000,
          release: (events) => store.release(events.map(({ service, id }) => ({ service, id })))
        })
        return EventHandOver.of({
          open: handOver.open(leaseMillis),
          leaseFor: handOver.leaseFor,
          handOver: (event) => Effect.andThen(handOver.give(event), wakeup.wake),
          take: handOver.take
        })
      })
    )
}
