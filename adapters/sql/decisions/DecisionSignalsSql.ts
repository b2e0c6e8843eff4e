import { PgClient } from "@effect/sql-pg"
import { Deferred, Duration, Effect, Layer, Option, Queue, Schedule, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { DecisionSignals } from "../../../core/decisions/DecisionSignals.ts"
import { makeInProcessSignals } from "../../../core/kernel/InProcessSignals.ts"
import { Transactions } from "../../../core/kernel/Transactions.ts"
import { Database } from "../Database.ts"

/** The one channel every instance listens on. */
export const decisionsChannel = "decisions_changed"

/**
 * A notification: the decision that changed, and which instance sent it. An instance has already woken its
 * own waiters when it sends, so it ignores its own notifications: delivered back to it a moment later, they
 * would wake waiters that subscribed after the signal, which the port promises never happens.
 */
const Notice = Schema.fromJsonString(Schema.Struct({ from: Schema.String, id: Schema.String }))

const reconnect = Schedule.exponential("100 millis").pipe(
  Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.seconds(5))))
)

/**
 * DecisionSignals across server instances: the in-process signals (core/kernel/InProcessSignals.ts), plus Postgres
 * LISTEN/NOTIFY on `decisions_changed`. `signal` waits for the commit of the unit of work it is sent in
 * (`Transactions.afterCommit`; at once outside one), then wakes this instance's waiters and sends a NOTIFY: a
 * waiter woken earlier would read the decision as it was before the change, and miss it. A fiber of the
 * layer's scope LISTENs on a connection of its own (one of the pool's) and wakes this instance's waiters on
 * every other instance's notifications. The layer is ready once the LISTEN is.
 *
 * On the embedded database this is the in-process signals alone: PGlite is served to a pool of ONE
 * connection, and a LISTEN holds its connection for good, so it would starve every query. Nothing is lost,
 * since an embedded database belongs to a single process anyway.
 *
 * A notification can be lost: NOTIFY failing after a committed change (logged, and the change stands: failing
 * the move would invite the caller to retry a move that happened), or the listening connection dropping.
 * Long-polls then end at their deadline instead, with the right answer. On reconnection every local waiter
 * is woken: its watch reads the decision once and its waiters go on waiting if nothing changed, so a
 * spurious wake-up costs a read while a missed one costs the whole wait.
 */
export const DecisionSignalsSql: Layer.Layer<DecisionSignals, never, Database | PgClient.PgClient | Transactions> =
  Layer.effect(
    DecisionSignals,
    Effect.gen(function* () {
      const local = yield* makeInProcessSignals
      const transactions = yield* Transactions
      const database = yield* Database
      if (database.kind === "embedded") {
        return DecisionSignals.of({
          signal: (decisionId) => transactions.afterCommit(local.wake(decisionId)),
          subscribe: local.subscribe
        })
      }

      const pg = yield* PgClient.PgClient
      const instance = randomUUID()
      const encodeNotice = Schema.encodeSync(Notice)
      const decodeNotice = Schema.decodeUnknownOption(Notice)

      // How many local waiters each decision has, to wake them all after a reconnection.
      const waiting = new Map<string, number>()
      const track = (decisionId: string) =>
        Effect.acquireRelease(
          Effect.sync(() => void waiting.set(decisionId, (waiting.get(decisionId) ?? 0) + 1)),
          () =>
            Effect.sync(() => {
              const left = (waiting.get(decisionId) ?? 1) - 1
              if (left === 0) waiting.delete(decisionId)
              else waiting.set(decisionId, left)
            })
        )
      const wakeEveryWaiter = Effect.suspend(() => Effect.forEach([...waiting.keys()], local.wake, { discard: true }))

      const listening = yield* Deferred.make<void>()
      let sessions = 0
      const session = Effect.scoped(
        Effect.gen(function* () {
          const notifications = yield* pg.listen(decisionsChannel)
          if (sessions++ > 0) yield* wakeEveryWaiter
          yield* Deferred.succeed(listening, undefined)
          while (true) {
            const notice = decodeNotice((yield* Queue.take(notifications)).payload)
            if (Option.isSome(notice) && notice.value.from !== instance) yield* local.wake(notice.value.id)
          }
        })
      )
      yield* session.pipe(
        Effect.tapError((error) => Effect.logWarning("decision signals stopped listening; listening again", error)),
        Effect.retry(reconnect),
        Effect.forkScoped
      )
      yield* Deferred.await(listening).pipe(
        Effect.timeoutOrElse({
          duration: Duration.seconds(10),
          orElse: () => Effect.die(new Error(`decision signals could not LISTEN on ${decisionsChannel} within 10 s`))
        })
      )

      return DecisionSignals.of({
        signal: (decisionId) =>
          transactions.afterCommit(
            local.wake(decisionId).pipe(
              Effect.andThen(pg.notify(decisionsChannel, encodeNotice({ from: instance, id: decisionId }))),
              Effect.catch((error) => Effect.logWarning("decision signals could not notify other instances", error))
            )
          ),
        subscribe: (decisionId) => Effect.andThen(track(decisionId), local.subscribe(decisionId))
      })
    })
  )
