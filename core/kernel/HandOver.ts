import { Effect, type Scope } from "effect"
import { isoAt } from "./Timestamp.ts"

/**
 * Rows a writer hands straight to a worker of the same instance, so the worker need not claim them from the
 * database: while a worker is taking (`open`), the writer stores a new row already claimed (`leaseFor`: held
 * by this instance until then), and once its row has committed gives it over in memory (`give`); the worker
 * takes it from there (`take`). A row given and never taken (a crash, a shutdown) loses nothing: it is a
 * claimed row like any other, claimed again by any worker once its lease has passed. Past `maxWaiting` rows
 * given and not taken, `leaseFor` answers undefined and new rows are stored unclaimed, for the workers'
 * claims, so what waits in memory stays bounded.
 *
 * Used by the hub's event ingest and processor (core/hub/EventHandOver.ts) and the producers' outboxes and
 * their relays (core/events/ProducerOutbox.ts).
 */
export interface HandOver<A> {
  /** Takes hand-overs with this lease while the scope lasts; what is left untaken at its end waits for its lease. */
  readonly open: (leaseMillis: number) => Effect.Effect<void, never, Scope.Scope>
  /** The lease to store a new row with, or undefined: store it unclaimed. */
  readonly leaseFor: (nowMs: number) => string | undefined
  /** Gives over a row stored with `leaseFor`'s lease, once it has committed; kept only while a worker takes. */
  readonly give: (row: A) => void
  /** Up to `limit` of the rows given, oldest first; each taken once. */
  readonly take: (limit: number) => Effect.Effect<ReadonlyArray<A>>
}

export const makeHandOver = <A>(options: { readonly maxWaiting: number }): HandOver<A> => {
  const leases: Array<number> = []
  let waiting: Array<A> = []
  return {
    open: (leaseMillis) =>
      Effect.acquireRelease(
        Effect.sync(() => {
          leases.push(leaseMillis)
        }),
        () =>
          Effect.sync(() => {
            leases.splice(leases.indexOf(leaseMillis), 1)
            // Nobody takes them now: they wait for their leases, as after a crash.
            if (leases.length === 0) waiting = []
          })
      ),
    leaseFor: (nowMs) =>
      leases.length > 0 && waiting.length < options.maxWaiting ? isoAt(nowMs + Math.min(...leases)) : undefined,
    give: (row) => {
      if (leases.length > 0) waiting.push(row)
    },
    take: (limit) => Effect.sync(() => waiting.splice(0, limit))
  }
}
