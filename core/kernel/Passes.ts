import { Clock, Effect } from "effect"

/**
 * How far apart the passes of the workers woken per row begin (the outbox relays, the hub's event processor).
 * At 50 ms a notification reaches a person's channels at most about a tenth of a second later than it could,
 * which nobody notices, while rows arriving one at a time share a pass: at one request at a time a decision
 * create costs about a sixth less CPU than with passes 20 ms apart.
 */
export const workerPassSpacingMillis = 50

/**
 * A worker's passes kept at least `millis` apart: `spaced(pass)` runs `pass`, first waiting until `millis` have
 * gone by since the previous one began. A worker woken for each new row (an outbox relay, the hub's event
 * processor) would otherwise make one pass, with its fixed statements, per row when rows come one at a time;
 * spaced, the rows that arrive within `millis` share a pass. Under load a pass takes longer than `millis`
 * anyway, and nothing waits. The price is at most `millis` more before a row is handled.
 */
export const makeSpacedPasses = (millis: number) => {
  let lastStart = Number.NEGATIVE_INFINITY
  return <A, E, R>(pass: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.gen(function* () {
      const wait = lastStart + millis - (yield* Clock.currentTimeMillis)
      if (wait > 0) yield* Effect.sleep(wait)
      lastStart = yield* Clock.currentTimeMillis
      return yield* pass
    })
}
