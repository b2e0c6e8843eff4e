import type { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Queue, Schedule, type Scope } from "effect"

/** How a dropped LISTEN is taken up again: quickly at first, then every 5 s at most. */
export const listenAgain = Schedule.exponential("100 millis").pipe(
  Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.seconds(5))))
)

/**
 * Wakes a worker of this instance whenever another instance announces work on `channel` (a NOTIFY whose
 * payload is the sender's `instance`: this instance's own are skipped, since it wakes its worker itself after
 * its commit), and once each time the LISTEN (re)starts, so work announced while it was not listening is
 * looked for. LISTENs on a connection of its own for the life of the scope, listening again when dropped.
 */
export const wakeOnNotify = (options: {
  readonly pg: PgClient.PgClient
  readonly channel: string
  readonly instance: string
  readonly wake: Effect.Effect<unknown>
  /** Who stopped listening, for the log: "the event relay". */
  readonly who: string
}): Effect.Effect<void, never, Scope.Scope> =>
  Effect.scoped(
    Effect.gen(function* () {
      const notifications = yield* options.pg.listen(options.channel)
      yield* options.wake
      while (true) {
        if ((yield* Queue.take(notifications)).payload !== options.instance) yield* options.wake
      }
    })
  ).pipe(
    Effect.tapError((error) => Effect.logWarning(`${options.who} stopped listening; listening again`, error)),
    Effect.retry(listenAgain),
    Effect.forkScoped,
    Effect.asVoid
  )
