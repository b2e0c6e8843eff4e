import { Effect, type Scope } from "effect"
import { isoAt } from "./Timestamp.ts"

/**
 * Rows a writer hands straight to a worker of the same instance, so the worker need not claim them from the
 * database: while a worker is taking (`open`), the writer stores a new row already claimed (`leaseFor`: held
 * by this instance until then), and once its row has committed gives it over in memory (`give`); the worker
 * takes it from there (`take`). When the last worker stops taking (a shutdown), what it had not taken, and
 * what is given after, goes back to the database (`release`: unclaimed, due at once for any worker). A row
 * given and never taken nor released (a crash) loses nothing: it is a claimed row like any other, claimed
 * again by any worker once its lease has passed. That lease is the worker's own, but at most
 * `handOverLeaseMillis` (10 s): a row waits in memory for milliseconds, and both workers that take hand-overs
 * do what they do once per row however often it is done (the hub files an event once, a producer's event is
 * taken once by its id), so a short lease costs at worst a repeat the store ignores, while a crash delays what
 * it lost by no more than 10 s instead of the worker's longer lease. Past `maxWaiting` rows given and not
 * taken, `leaseFor` answers undefined and new rows are stored unclaimed, for the workers' claims, so what waits
 * in memory stays bounded.
 *
 * Used by the hub's event ingest and processor (core/hub/EventHandOver.ts) and the producers' outboxes and
 * their relays (core/events/ProducerOutbox.ts).
 */
export interface HandOver<A> {
  /**
   * Takes hand-overs with this lease (at most `handOverLeaseMillis`) while the scope lasts; what is left untaken
   * at its end is released.
   */
  readonly open: (leaseMillis: number) => Effect.Effect<void, never, Scope.Scope>
  /** The lease to store a new row with, or undefined: store it unclaimed. */
  readonly leaseFor: (nowMs: number) => string | undefined
  /** Gives over a row stored with `leaseFor`'s lease, once it has committed; released when no worker takes. */
  readonly give: (row: A) => Effect.Effect<void>
  /** Up to `limit` of the rows given, oldest first; each taken once. */
  readonly take: (limit: number) => Effect.Effect<ReadonlyArray<A>>
}

/**
 * Whether a worker's pass, handed `handed` rows for a batch of `batch`, also claims from the database: always
 * when it was handed none, never when it was handed a full batch, otherwise only once `everyMillis` have
 * passed since the last claim (other due rows, a retry or a crashed worker's, wait at most that long).
 */
export const makeClaimPacing = (everyMillis: number) => {
  let lastClaimAt = Number.NEGATIVE_INFINITY
  return (handed: number, batch: number, nowMs: number): boolean => {
    const claims = handed < batch && (handed === 0 || nowMs - lastClaimAt >= everyMillis)
    if (claims) lastClaimAt = nowMs
    return claims
  }
}

/** The longest a row handed over is stored claimed for: after a crash, what was lost in memory waits this long. */
export const handOverLeaseMillis = 10_000

export const makeHandOver = <A>(options: {
  readonly maxWaiting: number
  /** Gives rows stored claimed and never taken back to the database, unclaimed; best effort (a failure is logged). */
  readonly release: (rows: ReadonlyArray<A>) => Effect.Effect<void>
}): HandOver<A> => {
  const leases: Array<number> = []
  let waiting: Array<A> = []
  const release = (rows: ReadonlyArray<A>) =>
    rows.length === 0
      ? Effect.void
      : options
          .release(rows)
          .pipe(
            Effect.catchCause((cause) =>
              Effect.logWarning("rows handed over could not be given back; they wait for their leases", cause)
            )
          )
  return {
    open: (leaseMillis) =>
      Effect.acquireRelease(
        Effect.sync(() => {
          leases.push(leaseMillis)
        }),
        () =>
          Effect.suspend(() => {
            leases.splice(leases.indexOf(leaseMillis), 1)
            if (leases.length > 0) return Effect.void
            // Nobody takes them now: back to the database, for any worker (this one after a restart too).
            const left = waiting
            waiting = []
            return release(left)
          })
      ),
    leaseFor: (nowMs) =>
      leases.length > 0 && waiting.length < options.maxWaiting
        ? isoAt(nowMs + Math.min(handOverLeaseMillis, ...leases))
        : undefined,
    give: (row) =>
      Effect.suspend(() => {
        if (leases.length === 0) return release([row])
        waiting.push(row)
        return Effect.void
      }),
    take: (limit) => Effect.sync(() => waiting.splice(0, limit))
  }
}
