import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TransactionsSql, TransactionsSqlWith } from "../../adapters/sql/TransactionsSql.ts"
import { Transactions } from "../../core/kernel/Transactions.ts"
import { pglite, pgliteUngrouped } from "../support/Databases.ts"
import { freshTable } from "../support/HeldTable.ts"

const keys = (n: number) => Array.from({ length: n }, (_, i) => `k${String(i).padStart(2, "0")}`)

/**
 * Group commit turned off (for debugging): `TransactionsSqlWith({ grouping: false })`, or `TransactionsSql` over
 * a database provided with `SqlGroupCommit` off (`SQL_GROUP_COMMIT=false`). Each shared unit is then a
 * transaction of its own, as `atomically`, never grouped and never run as one statement.
 */
const ungrouped = [
  {
    name: "TransactionsSqlWith({ grouping: false })",
    layer: Layer.provideMerge(TransactionsSqlWith({ grouping: false }), pglite.layer)
  },
  { name: "SqlGroupCommit off", layer: Layer.provideMerge(TransactionsSql, pgliteUngrouped.layer) }
]

for (const { name, layer: units } of ungrouped) {
  describe(`shared units with grouping off (${name})`, () =>
    layer(units, { excludeTestServices: true })((it) => {
      it.effect("that arrive together each run in a transaction of their own, and all commit", () =>
        Effect.gen(function* () {
          const { shared } = yield* Transactions
          const table = yield* freshTable
          const all = keys(12)
          const seen = yield* Effect.forEach(
            all,
            (key) => shared(key, Effect.andThen(table.insertHeld(key), table.transaction)),
            { concurrency: "unbounded" }
          )
          assert.strictEqual(new Set(seen).size, all.length)
          assert.deepStrictEqual(yield* table.ids, all)
        })
      )

      it.effect("alone, run once in a transaction, even when they write at once", () =>
        Effect.gen(function* () {
          const { atomically, shared } = yield* Transactions
          const table = yield* freshTable
          // A transaction first: with grouping, a unit alone could then run as one statement.
          yield* atomically(table.transaction)
          let runs = 0
          const [first, second] = yield* shared(
            "alone",
            Effect.gen(function* () {
              runs++
              yield* table.insertNow("alone")
              return [yield* table.transaction, yield* table.transaction]
            })
          )
          assert.strictEqual(runs, 1)
          assert.strictEqual(first, second)
          assert.deepStrictEqual(yield* table.ids, ["alone"])
        })
      )
    }))
}
