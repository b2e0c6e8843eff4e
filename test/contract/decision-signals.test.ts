import { assert, describe, layer } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { DecisionSignalsMemory } from "../../adapters/memory/decisions/DecisionSignalsMemory.ts"
import { DecisionSignalsSql } from "../../adapters/sql/decisions/DecisionSignalsSql.ts"
import { Database } from "../../adapters/sql/Database.ts"
import { TransactionsMemory } from "../../adapters/memory/TransactionsMemory.ts"
import { TransactionsSql } from "../../adapters/sql/TransactionsSql.ts"
import { DecisionSignals } from "../../core/decisions/DecisionSignals.ts"
import { Transactions } from "../../core/kernel/Transactions.ts"
import { sqlBackends } from "../support/Databases.ts"

const freshDecisionId = () => `dec_${randomUUID()}`

/** Whether a wait completes within `millis`: a wake-up, or none. */
const wokeWithin = (wait: Effect.Effect<void>, millis: number) =>
  wait.pipe(Effect.as(true), Effect.timeoutOrElse({ duration: millis, orElse: () => Effect.succeed(false) }))

// Long enough for a NOTIFY to come back from the server to the instance that sent it.
const quietMillis = 500
const wakeMillis = 5_000

/** A unit of work that is undone. */
class Undone extends Schema.TaggedError<Undone>()("Undone", {}) {}

/**
 * The DecisionSignals port's contract (core/decisions/DecisionSignals.ts), run once per implementation, with
 * the units of work of the same adapter family.
 */
const DecisionSignalsContract = (name: string, signals: Layer.Layer<DecisionSignals | Transactions, unknown>) =>
  describe(`DecisionSignals contract (${name})`, () =>
    layer(signals, { excludeTestServices: true })((it) => {
      it.effect("every subscriber to a decision wakes on its next signal", () =>
        Effect.gen(function* () {
          const signals = yield* DecisionSignals
          const id = freshDecisionId()
          const first = yield* signals.subscribe(id)
          const second = yield* signals.subscribe(id)
          yield* signals.signal(id)
          assert.isTrue(yield* wokeWithin(first, wakeMillis))
          assert.isTrue(yield* wokeWithin(second, wakeMillis))
        })
      )

      it.effect("a subscription made after a signal does not see that earlier signal, only the next one", () =>
        Effect.gen(function* () {
          const signals = yield* DecisionSignals
          const id = freshDecisionId()
          yield* signals.signal(id)
          const next = yield* signals.subscribe(id)
          assert.isFalse(yield* wokeWithin(next, quietMillis))
          yield* signals.signal(id)
          assert.isTrue(yield* wokeWithin(next, wakeMillis))
        })
      )

      it.effect("a signal sent inside a unit of work wakes nobody until the unit commits, then wakes", () =>
        Effect.gen(function* () {
          const signals = yield* DecisionSignals
          const { atomically } = yield* Transactions
          const id = freshDecisionId()
          const next = yield* signals.subscribe(id)
          const wokeInside = yield* atomically(Effect.andThen(signals.signal(id), wokeWithin(next, quietMillis)))
          assert.isFalse(wokeInside, "woken before the commit")
          assert.isTrue(yield* wokeWithin(next, wakeMillis))
        })
      )

      it.effect("a signal sent inside a unit of work that is undone never wakes anyone", () =>
        Effect.gen(function* () {
          const signals = yield* DecisionSignals
          const { atomically } = yield* Transactions
          const id = freshDecisionId()
          const next = yield* signals.subscribe(id)
          yield* Effect.flip(atomically(Effect.andThen(signals.signal(id), Effect.fail(new Undone()))))
          assert.isFalse(yield* wokeWithin(next, quietMillis))
        })
      )

      it.effect("a signal wakes only the subscribers of its decision", () =>
        Effect.gen(function* () {
          const signals = yield* DecisionSignals
          const [id, other] = [freshDecisionId(), freshDecisionId()]
          const next = yield* signals.subscribe(id)
          yield* signals.signal(other)
          assert.isFalse(yield* wokeWithin(next, quietMillis))
        })
      )
    }))

DecisionSignalsContract("memory", Layer.provideMerge(DecisionSignalsMemory, TransactionsMemory))
for (const backend of sqlBackends) {
  DecisionSignalsContract(
    `sql on ${backend.name}`,
    Layer.provideMerge(DecisionSignalsSql, TransactionsSql).pipe(Layer.provide(backend.layer))
  )
}

/**
 * A second server instance: DecisionSignalsSql over a pool of its own on the first instance's database (the
 * backend's fresh database, whose URL the first instance's client knows).
 */
const anotherInstance = Effect.gen(function* () {
  const { config } = yield* PgClient.PgClient
  if (config.url === undefined) return yield* Effect.die(new Error("the Postgres backend has no URL"))
  // Fresh: built from the test's context, the layer would otherwise be memoized and answer this instance.
  const context = yield* Layer.build(
    Layer.fresh(DecisionSignalsSql).pipe(
      Layer.provide(TransactionsSql),
      Layer.provide(Database.layerPostgres({ url: config.url, maxConnections: 2 }))
    )
  )
  return Context.get(context, DecisionSignals)
})

for (const backend of sqlBackends.filter((b) => b.name === "postgres")) {
  describe("DecisionSignalsSql across server instances (postgres)", () =>
    layer(Layer.provideMerge(DecisionSignalsSql, Layer.provideMerge(TransactionsSql, backend.layer)), {
      excludeTestServices: true
    })((it) => {
      it.effect("a signal on one instance wakes a waiter on another, both ways", () =>
        Effect.gen(function* () {
          const here = yield* DecisionSignals
          const there = yield* anotherInstance
          const id = freshDecisionId()

          const waitingThere = yield* there.subscribe(id)
          yield* here.signal(id)
          assert.isTrue(yield* wokeWithin(waitingThere, wakeMillis))

          const waitingHere = yield* here.subscribe(id)
          yield* there.signal(id)
          assert.isTrue(yield* wokeWithin(waitingHere, wakeMillis))
        })
      )

      it.effect("a signal sent inside a unit of work wakes another instance's waiters only once it commits", () =>
        Effect.gen(function* () {
          const here = yield* DecisionSignals
          const { atomically } = yield* Transactions
          const there = yield* anotherInstance
          const [committed, undone] = [freshDecisionId(), freshDecisionId()]
          const waitingCommitted = yield* there.subscribe(committed)
          const waitingUndone = yield* there.subscribe(undone)

          const wokeInside = yield* atomically(
            Effect.andThen(here.signal(committed), wokeWithin(waitingCommitted, quietMillis))
          )
          assert.isFalse(wokeInside, "woken before the commit")
          assert.isTrue(yield* wokeWithin(waitingCommitted, wakeMillis))

          yield* Effect.flip(atomically(Effect.andThen(here.signal(undone), Effect.fail(new Undone()))))
          assert.isFalse(yield* wokeWithin(waitingUndone, quietMillis))
        })
      )

      it.effect("a signal from another instance wakes only the waiters of its decision", () =>
        Effect.gen(function* () {
          const here = yield* DecisionSignals
          const there = yield* anotherInstance
          const [id, other] = [freshDecisionId(), freshDecisionId()]
          const waitingThere = yield* there.subscribe(id)
          yield* here.signal(other)
          assert.isFalse(yield* wokeWithin(waitingThere, quietMillis))
        })
      )

      it.effect("when its listening connection drops, an instance wakes its waiters and listens again", () =>
        Effect.gen(function* () {
          const here = yield* DecisionSignals
          const there = yield* anotherInstance
          const sql = yield* SqlClient.SqlClient
          const [idHere, idThere] = [freshDecisionId(), freshDecisionId()]
          const waitingHere = yield* here.subscribe(idHere)
          const waitingThere = yield* there.subscribe(idThere)

          const dropped = yield* sql<{ pid: number }>`
            SELECT pid FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN %'`
          assert.strictEqual(dropped.length, 2)
          yield* sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN %'`

          // Notifications sent while an instance was not listening are lost: it wakes everyone instead,
          // once it listens again.
          assert.isTrue(yield* wokeWithin(waitingHere, wakeMillis))
          assert.isTrue(yield* wokeWithin(waitingThere, wakeMillis))

          const id = freshDecisionId()
          const waiting = yield* there.subscribe(id)
          yield* here.signal(id)
          assert.isTrue(yield* wokeWithin(waiting, wakeMillis))
        })
      )
    }))
}
