import { assert, describe, layer } from "@effect/vitest"
import { Cause, Effect, Exit, Layer } from "effect"
import { TransactionsSql } from "../../adapters/sql/TransactionsSql.ts"
import { writeBehind } from "../../adapters/sql/units/HeldWrites.ts"
import { Transactions } from "../../core/kernel/Transactions.ts"
import { sqlBackendsBothWays } from "../support/Databases.ts"
import { freshTable } from "../support/HeldTable.ts"

class Undo {
  readonly _tag = "Undo"
}

/**
 * Writes held until the end of their unit (adapters/sql/TransactionsSql.ts `writeBehind`): they commit with
 * the unit, go with the nested unit they were made in when it fails, and fail the whole unit when they fail.
 */
for (const backend of sqlBackendsBothWays) {
  describe(`writes held until the end of the unit (${backend.name})`, () =>
    layer(Layer.provideMerge(TransactionsSql, backend.layer), { excludeTestServices: true })((it) => {
      it.effect("are sent at the unit's end and commit with it; outside a unit they are written at once", () =>
        Effect.gen(function* () {
          const { atomically } = yield* Transactions
          const table = yield* freshTable
          yield* atomically(
            Effect.gen(function* () {
              yield* table.insertNow("a")
              yield* table.insertHeld("b")
              yield* table.insertHeld("c")
              // Held: not written yet, so the unit itself does not see them.
              assert.deepStrictEqual(yield* table.ids, ["a"])
            })
          )
          assert.deepStrictEqual(yield* table.ids, ["a", "b", "c"])
          yield* table.insertHeld("d")
          assert.deepStrictEqual(yield* table.ids, ["a", "b", "c", "d"])
        })
      )

      it.effect("go with a nested unit that fails, join the unit with one that succeeds, go with a unit undone", () =>
        Effect.gen(function* () {
          const { atomically, join } = yield* Transactions
          const table = yield* freshTable
          yield* atomically(
            Effect.gen(function* () {
              yield* table.insertHeld("outer")
              yield* Effect.exit(atomically(Effect.andThen(table.insertHeld("failed"), Effect.fail(new Undo()))))
              yield* atomically(table.insertHeld("nested"))
              yield* atomically(atomically(table.insertHeld("twice nested")))
              yield* join(table.insertHeld("joined"))
            })
          )
          assert.deepStrictEqual(yield* table.ids, ["joined", "nested", "outer", "twice nested"])
          yield* Effect.exit(
            atomically(Effect.andThen(atomically(table.insertHeld("undone")), Effect.fail(new Undo())))
          )
          assert.deepStrictEqual(yield* table.ids, ["joined", "nested", "outer", "twice nested"])
        })
      )

      it.effect("that fail undo the whole unit, its other writes included, as a defect", () =>
        Effect.gen(function* () {
          const { atomically } = yield* Transactions
          const table = yield* freshTable
          const exit = yield* Effect.exit(
            atomically(
              Effect.gen(function* () {
                yield* table.insertNow("now")
                yield* table.insertHeld("held")
                yield* table.insertHeld("bad", -1)
                return "answered"
              })
            )
          )
          assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause), "the unit died")
          assert.deepStrictEqual(yield* table.ids, [])
        })
      )

      it.effect("as many as a unit holds commit together, or are undone together when the last of them fails", () =>
        Effect.gen(function* () {
          const { atomically } = yield* Transactions
          const table = yield* freshTable
          const many = Array.from({ length: 450 }, (_, i) => `r${String(i).padStart(3, "0")}`)
          yield* atomically(Effect.forEach(many, (id) => table.insertHeld(id), { discard: true }))
          assert.deepStrictEqual(yield* table.ids, many)
          const exit = yield* Effect.exit(
            atomically(
              Effect.andThen(
                Effect.forEach(many, (id) => table.insertHeld(`s${id}`), { discard: true }),
                table.insertHeld("t", -1)
              )
            )
          )
          assert.isTrue(Exit.isFailure(exit))
          assert.deepStrictEqual((yield* table.ids).length, many.length)
        })
      )

      it.effect("in a transaction begun without Transactions are written at once, undone with it", () =>
        Effect.gen(function* () {
          const table = yield* freshTable
          yield* Effect.exit(
            table.sql.withTransaction(
              Effect.gen(function* () {
                yield* table.insertHeld("raw")
                assert.deepStrictEqual(yield* table.ids, ["raw"])
                return yield* Effect.fail(new Undo())
              })
            )
          )
          assert.deepStrictEqual(yield* table.ids, [])
        })
      )

      it.effect("answer the value of their query over the rows written, held or not", () =>
        Effect.gen(function* () {
          const { atomically } = yield* Transactions
          const table = yield* freshTable
          const seen: Array<unknown> = []
          const counted = (id: string) =>
            writeBehind(
              table.sql,
              table.sql`INSERT INTO ${table.sql(table.name)} (id, v) VALUES (${id}, 1) ON CONFLICT DO NOTHING RETURNING id`,
              {
                query: (rows) => table.sql`SELECT count(*)::integer FROM ${rows}`,
                onValue: (value) => Effect.sync(() => seen.push(value))
              }
            )
          yield* atomically(
            Effect.gen(function* () {
              yield* counted("x")
              yield* table.insertHeld("y")
              yield* counted("z")
              assert.deepStrictEqual(seen, [])
            })
          )
          assert.deepStrictEqual(seen, [1, 1])
          yield* counted("x")
          assert.deepStrictEqual(seen, [1, 1, 0])
        })
      )
    }))
}
