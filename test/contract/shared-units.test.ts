import { assert, describe, layer } from "@effect/vitest"
import { Cause, Context, Effect, Exit, Layer, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { CredentialNotices, CredentialNoticesSql } from "../../adapters/sql/CredentialNotices.ts"
import { Database } from "../../adapters/sql/Database.ts"
import { TransactionsSql } from "../../adapters/sql/TransactionsSql.ts"
import { gatheredInShared, onceInShared } from "../../adapters/sql/units/GatheredReads.ts"
import { writeBehind } from "../../adapters/sql/units/HeldWrites.ts"
import { oneStatementGuards } from "../../adapters/sql/units/OneStatement.ts"
import { Transactions } from "../../core/kernel/Transactions.ts"
import { sqlBackends } from "../support/Databases.ts"
import { freshTable } from "../support/HeldTable.ts"

/** A service an after-commit effect reads: which it sees tells the services it runs with. */
class Label extends Context.Service<Label, string>()("test/shared-units/Label") {}

class Undo {
  readonly _tag = "Undo"
}

/** A request's data, in the services a unit runs with: what a finished unit must let go of. */
class Payload extends Context.Service<Payload, { readonly text: string }>()("test/shared-units/Payload") {}

// A full garbage collection on demand, to tell whether anything still holds an object.
setFlagsFromString("--expose-gc")
const collectGarbage = runInNewContext("gc") as () => void

/**
 * Runs a unit (through `run`) that holds a write and an after-commit effect and has a payload among its services:
 * answers the unit's level, for the caller to keep, and a weak reference to the payload, which only the unit held.
 */
const holding = <E, R>(
  table: Effect.Success<typeof freshTable>,
  id: string,
  run: (unit: Effect.Effect<unknown, never, Transactions>) => Effect.Effect<unknown, E, R>
) =>
  Effect.suspend(() => {
    const payload = { text: `the data of ${id}` }
    const weak = new WeakRef(payload)
    const unit = Effect.gen(function* () {
      const { afterCommit } = yield* Transactions
      yield* Effect.orDie(table.insertHeld(id))
      yield* afterCommit(Effect.void)
      return Option.getOrUndefined(yield* Effect.serviceOption(table.sql.transactionService))
    }).pipe(Effect.provideService(Payload, payload))
    return Effect.map(run(unit), (level) => ({ level, weak }))
  })

/** After a turn of the event loop and a full collection: how many of the payloads are still held. */
const stillHeld = (weaks: ReadonlyArray<WeakRef<object>>) =>
  Effect.andThen(
    Effect.promise(() => new Promise((resolve) => setImmediate(resolve))),
    Effect.sync(() => {
      collectGarbage()
      return weaks.filter((weak) => weak.deref() !== undefined).length
    })
  )

/** `f` of every item at once: units that arrive together. */
const together = <T, A, E, R>(
  items: ReadonlyArray<T>,
  f: (item: T) => Effect.Effect<A, E, R>
): Effect.Effect<Array<A>, E, R> => Effect.forEach(items, f, { concurrency: "unbounded" })

/** How many times each unit ran: `count(key)` at the start of each run. */
const runCounter = () => {
  const runs = new Map<string, number>()
  return { runs, count: (key: string) => Effect.sync(() => void runs.set(key, (runs.get(key) ?? 0) + 1)) }
}

const keys = (n: number) => Array.from({ length: n }, (_, i) => `k${String(i).padStart(2, "0")}`)

/**
 * Units that share one transaction (adapters/sql/TransactionsSql.ts, `Transactions.shared`): they run side by
 * side in it and commit together; statements they make at the same moment go as one; a failure anywhere
 * undoes the group and each unit runs again alone.
 */
for (const backend of sqlBackends) {
  describe(`shared units (${backend.name})`, () =>
    layer(Layer.provideMerge(TransactionsSql, backend.layer), { excludeTestServices: true })((it) => {
      it.effect("that arrive together run in one transaction and commit together, their held writes included", () =>
        Effect.gen(function* () {
          const { shared } = yield* Transactions
          const table = yield* freshTable
          const all = keys(12)
          const seen = yield* together(all, (key) =>
            shared(key, Effect.andThen(table.insertHeld(key), table.transaction))
          )
          // The first arrivals may each run alone while the rest gather; the rest share.
          assert.isBelow(new Set(seen).size, all.length)
          assert.deepStrictEqual(yield* table.ids, all)
        })
      )

      it.effect("with the same key never share a transaction", () =>
        Effect.gen(function* () {
          const { shared } = yield* Transactions
          const table = yield* freshTable
          const all = [...keys(6), "same", "same", "same"]
          const seen = yield* together(all, (key) => shared(key, table.transaction))
          const same = seen.filter((_, i) => all[i] === "same")
          assert.strictEqual(new Set(same).size, 3)
        })
      )

      it.effect("undo the group when one fails: the others commit alone, the failing one leaves nothing", () =>
        Effect.gen(function* () {
          const { shared } = yield* Transactions
          const table = yield* freshTable
          const all = keys(10)
          const { runs, count } = runCounter()
          const exits = yield* together(all, (key) =>
            Effect.exit(
              shared(
                key,
                Effect.gen(function* () {
                  yield* count(key)
                  yield* table.insertNow(`${key}-now`)
                  yield* table.insertHeld(key)
                  if (key === "k07") return yield* Effect.fail(new Undo())
                })
              )
            )
          )
          for (const [i, exit] of exits.entries()) {
            assert.strictEqual(Exit.isSuccess(exit), all[i] !== "k07", all[i])
          }
          const failed = exits[7]!
          assert.isTrue(Exit.isFailure(failed) && Cause.hasFails(failed.cause))
          const expected = all.filter((k) => k !== "k07").flatMap((k) => [k, `${k}-now`])
          assert.deepStrictEqual(yield* table.ids, expected.sort())
          // The units that had shared k07's transaction ran a second time, alone.
          assert.isAbove([...runs.values()].filter((n) => n === 2).length, 0)
        })
      )

      it.effect("undo the group when a held write fails, and each unit then stands or falls alone", () =>
        Effect.gen(function* () {
          const { shared } = yield* Transactions
          const table = yield* freshTable
          const all = keys(8)
          const exits = yield* together(all, (key) =>
            Effect.exit(shared(key, table.insertHeld(key, key === "k03" ? -1 : 1)))
          )
          for (const [i, exit] of exits.entries()) assert.strictEqual(Exit.isSuccess(exit), i !== 3)
          assert.deepStrictEqual(
            yield* table.ids,
            all.filter((k) => k !== "k03")
          )
        })
      )

      it.effect("a nested unit that fails in a shared unit undoes the group; alone it undoes only its own writes", () =>
        Effect.gen(function* () {
          const { shared, atomically } = yield* Transactions
          const table = yield* freshTable
          const all = keys(6)
          yield* together(all, (key) =>
            shared(
              key,
              Effect.gen(function* () {
                yield* table.insertNow(key)
                if (key === "k02") {
                  yield* Effect.exit(atomically(Effect.andThen(table.insertNow("nested"), Effect.fail(new Undo()))))
                }
              })
            )
          )
          assert.deepStrictEqual(yield* table.ids, all)
        })
      )

      it.effect(
        "a transaction opened on the SQL client in a shared unit undoes the group; alone it is a savepoint",
        () =>
          Effect.gen(function* () {
            const { shared } = yield* Transactions
            const sql = yield* SqlClient.SqlClient
            const table = yield* freshTable
            const all = keys(6)
            const { runs, count } = runCounter()
            yield* together(all, (key) =>
              shared(
                key,
                Effect.gen(function* () {
                  yield* count(key)
                  yield* table.insertNow(key)
                  if (key === "k04") {
                    yield* Effect.exit(
                      sql.withTransaction(Effect.andThen(table.insertNow("savepoint"), Effect.fail(new Undo())))
                    )
                  }
                })
              )
            )
            assert.deepStrictEqual(yield* table.ids, all)
            assert.isAbove([...runs.values()].filter((n) => n === 2).length, 0)
          })
      )

      it.effect("gather the statements their units make at the same moment into one call", () =>
        Effect.gen(function* () {
          const { shared } = yield* Transactions
          const sql = yield* SqlClient.SqlClient
          const calls: Array<number> = []
          const double = gatheredInShared(sql, (items: ReadonlyArray<number>) =>
            Effect.sync(() => {
              calls.push(items.length)
              return items.map((n) => n * 2)
            })
          )
          const all = Array.from({ length: 16 }, (_, i) => i)
          const results = yield* together(all, (n) => shared(`n${n}`, double(n)))
          assert.deepStrictEqual(
            results,
            all.map((n) => n * 2)
          )
          assert.isBelow(calls.length, all.length)
          assert.strictEqual(
            calls.reduce((a, b) => a + b, 0),
            all.length
          )
          // Outside a shared unit: one call per item.
          assert.strictEqual(yield* double(21), 42)
          assert.strictEqual(calls.at(-1), 1)
        })
      )

      it.effect("read what they all need once", () =>
        Effect.gen(function* () {
          const { shared } = yield* Transactions
          const sql = yield* SqlClient.SqlClient
          let reads = 0
          const read = onceInShared(
            sql,
            "the-role",
            Effect.sync(() => ++reads)
          )
          const all = keys(16)
          const seen = yield* together(all, (key) => shared(key, read))
          assert.isBelow(reads, all.length)
          assert.isBelow(new Set(seen).size, all.length)
        })
      )
    }))
}

/**
 * A shared unit that has no other to share with runs as one statement, without a transaction
 * (adapters/sql/TransactionsSql.ts, `OneStatement`): reads as they come, held writes and guards in one last
 * statement; anything that needs a transaction spoils the run, and the unit runs again in one, having left
 * nothing behind.
 */
for (const backend of sqlBackends) {
  describe(`a shared unit alone (${backend.name})`, () =>
    layer(Layer.provideMerge(TransactionsSql, backend.layer), { excludeTestServices: true })((it) => {
      /** A unit run and the ids of the transactions its two reads ran in. */
      const alone = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        Effect.gen(function* () {
          const { shared, atomically } = yield* Transactions
          // The first transaction teaches the layer the SQL client's lock for nested transactions.
          yield* atomically(Effect.void)
          return yield* shared(`alone-${Math.random()}`, effect)
        })

      it.effect("runs as one statement: its reads each on their own, its held writes committed together", () =>
        Effect.gen(function* () {
          const table = yield* freshTable
          const [first, second] = yield* alone(
            Effect.gen(function* () {
              const first = yield* table.transaction
              yield* table.insertHeld("a")
              yield* table.insertHeld("b")
              return [first, yield* table.transaction] as const
            })
          )
          assert.notStrictEqual(first, second)
          assert.deepStrictEqual(yield* table.ids, ["a", "b"])
        })
      )

      it.effect("that writes at once runs again in a transaction: each write once", () =>
        Effect.gen(function* () {
          const table = yield* freshTable
          let runs = 0
          const [first, second] = yield* alone(
            Effect.gen(function* () {
              runs++
              const first = yield* table.transaction
              yield* table.insertHeld("held")
              yield* table.insertNow("now")
              return [first, yield* table.transaction] as const
            })
          )
          assert.strictEqual(runs, 2)
          assert.strictEqual(first, second)
          assert.deepStrictEqual(yield* table.ids, ["held", "now"])
        })
      )

      it.effect(
        "that locks a row, or has a nested unit fail, or opens a transaction, runs again in a transaction",
        () =>
          Effect.gen(function* () {
            const { atomically } = yield* Transactions
            const sql = yield* SqlClient.SqlClient
            const table = yield* freshTable
            yield* table.insertNow("row")
            const units = [
              sql`SELECT id FROM ${sql(table.name)} FOR UPDATE`,
              Effect.exit(atomically(Effect.andThen(table.insertHeld("nested"), Effect.fail(new Undo())))),
              Effect.exit(sql.withTransaction(Effect.andThen(table.insertNow("savepoint"), Effect.fail(new Undo()))))
            ]
            for (const [i, unit] of units.entries()) {
              let runs = 0
              const [first, second] = yield* alone(
                Effect.gen(function* () {
                  runs++
                  const first = yield* table.transaction
                  yield* unit
                  yield* table.insertHeld(`after-${i}`)
                  return [first, yield* table.transaction] as const
                })
              )
              assert.strictEqual(runs, 2, `unit ${i}`)
              assert.strictEqual(first, second, `unit ${i}`)
            }
            assert.deepStrictEqual(yield* table.ids, ["after-0", "after-1", "after-2", "row"])
          })
      )

      it.effect("that fails leaves nothing and fails as it would in a transaction", () =>
        Effect.gen(function* () {
          const table = yield* freshTable
          let runs = 0
          const exit = yield* Effect.exit(
            alone(
              Effect.gen(function* () {
                runs++
                yield* table.insertHeld("x")
                return yield* Effect.fail(new Undo())
              })
            )
          )
          assert.isTrue(Exit.isFailure(exit) && Cause.hasFails(exit.cause))
          assert.strictEqual(runs, 2)
          assert.deepStrictEqual(yield* table.ids, [])
        })
      )

      it.effect("whose held write fails leaves nothing: its other writes are undone with it", () =>
        Effect.gen(function* () {
          const table = yield* freshTable
          // More than the groups a server runs at once: a failed unit gives its slot back.
          for (let i = 0; i < 6; i++) {
            const exit = yield* Effect.exit(
              alone(Effect.andThen(table.insertHeld(`ok-${i}`), table.insertHeld(`bad-${i}`, -1)))
            )
            assert.isTrue(Exit.isFailure(exit))
          }
          assert.deepStrictEqual(yield* table.ids, [])
          yield* alone(table.insertHeld("after"))
          assert.deepStrictEqual(yield* table.ids, ["after"])
        })
      )

      it.effect("a credential change it announces is heard on this instance only after its commit", () =>
        Effect.scoped(
          Effect.gen(function* () {
            const notices = Context.get(yield* Layer.build(CredentialNoticesSql), CredentialNotices)
            const order: Array<string> = []
            yield* notices.listen("test.shared-units", { changed: () => void order.push("heard"), reset: () => {} })
            // On the embedded database the notice is passed in process; on a Postgres server its NOTIFY spoils
            // the one-statement run, and the unit runs again in a transaction.
            yield* alone(
              Effect.andThen(
                notices.announce("test.shared-units", "k"),
                Effect.sync(() => void order.push("unit ended"))
              )
            )
            assert.deepStrictEqual(order.slice(0, 2), ["unit ended", "heard"])
          })
        )
      )

      it.effect("lets go of what it held once done, though its level is still referenced", () =>
        Effect.gen(function* () {
          const table = yield* freshTable
          const { level, weak } = yield* holding(table, "a", alone)
          assert.deepStrictEqual(yield* table.ids, ["a"])
          assert.strictEqual(yield* stillHeld([weak]), 0)
          assert.isDefined(level)
        })
      )

      it.effect("runs its after-commit effects once its statement has committed, and only then", () =>
        Effect.gen(function* () {
          const { afterCommit } = yield* Transactions
          const table = yield* freshTable
          const seen: Array<string> = []
          const look = afterCommit(
            Effect.orDie(
              Effect.gen(function* () {
                const label = yield* Label
                seen.push(`${label}:${yield* table.ids}`)
              })
            )
          )
          yield* alone(
            Effect.andThen(
              table.insertHeld("a"),
              Effect.andThen(
                Effect.provideService(look, Label, "outer"),
                Effect.andThen(Effect.provideService(look, Label, "inner"), look)
              )
            ).pipe(Effect.provideService(Label, "unit"))
          )
          // In order, each with the services it was registered with, reading the committed row.
          assert.deepStrictEqual(seen, ["outer:a", "inner:a", "unit:a"])
        })
      )

      it.effect("runs its after-commit effects outside the unit: what they write is their own, committed at once", () =>
        Effect.gen(function* () {
          const { afterCommit } = yield* Transactions
          const table = yield* freshTable
          const inUnit: Array<boolean> = []
          yield* alone(
            Effect.andThen(
              table.insertHeld("a"),
              afterCommit(
                Effect.orDie(
                  Effect.gen(function* () {
                    const services = yield* Effect.context<never>()
                    inUnit.push(Context.getOrUndefined(services, table.sql.transactionService) !== undefined)
                    yield* table.insertNow("b")
                  })
                )
              )
            )
          )
          assert.deepStrictEqual(inUnit, [false])
          assert.deepStrictEqual(yield* table.ids, ["a", "b"])
        })
      )
    }))
}

/**
 * Once the layer knows the SQL client (after its first transaction), units that arrive together run as ONE
 * statement (adapters/sql/TransactionsSql.ts, `runStatementGroup`): each member's reads as they come, every
 * member's guards and held writes in one last statement, committed or refused whole.
 */
for (const backend of sqlBackends) {
  describe(`shared units as one statement (${backend.name})`, () =>
    layer(Layer.provideMerge(TransactionsSql, backend.layer), { excludeTestServices: true })((it) => {
      /** `f` of every item at once, once the layer has seen a transaction. */
      const sharedTogether = <T, A, E, R>(items: ReadonlyArray<T>, f: (item: T) => Effect.Effect<A, E, R>) =>
        Effect.gen(function* () {
          const { atomically } = yield* Transactions
          yield* atomically(Effect.void)
          return yield* together(items, f)
        })

      /** The transaction that wrote each row of the table: rows written by one statement share one. */
      const writers = (table: Effect.Success<typeof freshTable>) =>
        Effect.map(
          table.sql<{
            readonly id: string
            readonly x: string
          }>`SELECT id, xmin::text AS x FROM ${table.sql(table.name)}`,
          (rows) => new Map(rows.map((row) => [row.id, row.x]))
        )

      it.effect("commit their held writes in one statement, each read in a transaction of its own", () =>
        Effect.gen(function* () {
          const { shared } = yield* Transactions
          const table = yield* freshTable
          const all = keys(12)
          const seen = yield* sharedTogether(all, (key) =>
            shared(key, Effect.andThen(table.insertHeld(key), table.transaction))
          )
          assert.deepStrictEqual(yield* table.ids, all)
          const written = yield* writers(table)
          const byWriter = new Map<string, Array<string>>()
          for (const key of all) byWriter.set(written.get(key)!, [...(byWriter.get(written.get(key)!) ?? []), key])
          const groups = [...byWriter.values()].filter((members) => members.length > 1)
          // Some arrived together and went in one statement...
          assert.isAbove(groups.length, 0)
          for (const members of groups) {
            // ...and no two of them read in one transaction, nor in the one that wrote their rows: not a transaction.
            // (`txid_current()` counts the wraparounds of the 32-bit id `xmin` holds.)
            const reads = members.map((key) => String(BigInt(seen[all.indexOf(key)]!) % 4294967296n))
            assert.strictEqual(new Set(reads).size, members.length)
            for (const read of reads) assert.notStrictEqual(read, written.get(members[0]!))
          }
        })
      )

      it.effect("let go of what they held once done, though their levels are still referenced", () =>
        Effect.gen(function* () {
          const { shared } = yield* Transactions
          const table = yield* freshTable
          const all = keys(8)
          const ran = yield* sharedTogether(all, (key) => holding(table, key, (unit) => shared(key, unit)))
          assert.deepStrictEqual(yield* table.ids, all)
          // Some went in one statement together (rows that share a writer).
          assert.isBelow(new Set((yield* writers(table)).values()).size, all.length)
          assert.strictEqual(yield* stillHeld(ran.map(({ weak }) => weak)), 0)
          for (const { level } of ran) assert.isDefined(level)
        })
      )

      it.effect("go in groups of a power of two, so that a group's statement has one of a few shapes", () =>
        Effect.gen(function* () {
          const { shared } = yield* Transactions
          const table = yield* freshTable
          const all = keys(12)
          yield* sharedTogether(all, (key) => shared(key, table.insertHeld(key)))
          assert.deepStrictEqual(yield* table.ids, all)
          const sizes = new Map<string, number>()
          for (const writer of (yield* writers(table)).values()) sizes.set(writer, (sizes.get(writer) ?? 0) + 1)
          // Twelve waiting go as eight and four (or smaller groups, had they not all arrived at once), never twelve.
          assert.isAbove(Math.max(...sizes.values()), 1)
          for (const size of sizes.values()) assert.strictEqual(size & (size - 1), 0, `a group of ${size}`)
        })
      )

      it.effect("are refused whole when one guard fails, and then each stands or falls alone", () =>
        Effect.gen(function* () {
          const { shared } = yield* Transactions
          const sql = yield* SqlClient.SqlClient
          const table = yield* freshTable
          yield* table.insertNow("taken")
          const all = keys(10)
          // The even ones claim a row (a guard, when run as one statement); the odd ones have no guard.
          const claiming = all.filter((_, i) => i % 2 === 0)
          const { runs, count } = runCounter()
          const asGuards = new Set<string>()
          const exits = yield* sharedTogether(all, (key) =>
            Effect.exit(
              shared(
                key,
                Effect.gen(function* () {
                  yield* count(key)
                  const guards = yield* oneStatementGuards(sql)
                  // k04's guard claims a row that is taken: as a guard it fails the statement it is part of.
                  const claim = sql`INSERT INTO ${sql(table.name)} (id, v)
                    VALUES (${key === "k04" ? "taken" : `${key}-claim`}, 1) ON CONFLICT (id) DO NOTHING RETURNING id`
                  if (claiming.includes(key) && guards !== undefined) {
                    asGuards.add(key)
                    guards.push({ write: claim, tag: key })
                  } else if (claiming.includes(key) && key !== "k04") {
                    yield* claim
                  }
                  yield* table.insertHeld(key)
                })
              )
            )
          )
          // The database refused the statement, so nothing of it stayed: each unit, with a guard or not, ran again.
          for (const exit of exits) assert.isTrue(Exit.isSuccess(exit))
          assert.isTrue(asGuards.has("k04"))
          assert.deepStrictEqual(
            yield* table.ids,
            [...all, ...claiming.filter((k) => k !== "k04").map((k) => `${k}-claim`), "taken"].sort()
          )
          assert.isAbove([...runs.values()].filter((n) => n === 2).length, 1)
        })
      )

      if (backend.name === "postgres") {
        it.effect(
          "cut off mid-statement: a unit with a guard runs again, one without fails as its outcome is unknown, one that held nothing stands",
          () =>
            Effect.gen(function* () {
              const { shared } = yield* Transactions
              const sql = yield* SqlClient.SqlClient
              const table = yield* freshTable
              const all = keys(8)
              const guarded = new Set(["k01", "k03", "k05", "k07"])
              let cut = false
              const { runs, count } = runCounter()
              const exits = yield* sharedTogether(all, (key) =>
                Effect.exit(
                  shared(
                    key,
                    Effect.gen(function* () {
                      yield* count(key)
                      const guards = yield* oneStatementGuards(sql)
                      if (guards !== undefined && guarded.has(key)) {
                        guards.push({
                          write: sql`INSERT INTO ${sql(table.name)} (id, v) VALUES (${`${key}-claim`}, 1) RETURNING id`,
                          tag: key
                        })
                      }
                      // k06 holds nothing: it stands however its group's statement ends.
                      if (key !== "k06") yield* table.insertHeld(key)
                      // Once only: the first statement that holds this write loses its connection half-way.
                      if (key === "k02" && !cut && guards !== undefined) {
                        cut = true
                        yield* writeBehind(sql, sql`SELECT pg_terminate_backend(pg_backend_pid()) AS gone`, {
                          query: (rows) => sql`SELECT gone FROM ${rows}`,
                          onValue: () => Effect.void
                        })
                      }
                    })
                  )
                )
              )
              assert.isTrue(cut)
              const ids = yield* table.ids
              for (const [i, exit] of exits.entries()) {
                const key = all[i]!
                if (guarded.has(key)) {
                  // Found again by its guard's key: committed once.
                  assert.isTrue(Exit.isSuccess(exit), key)
                  assert.isTrue(ids.includes(key), key)
                } else if (Exit.isFailure(exit)) {
                  // Its group's statement was cut off: it cannot tell whether it committed, and says so.
                  assert.isTrue(Cause.hasDies(exit.cause), key)
                  assert.isFalse(ids.includes(key), key)
                } else if (key !== "k06") {
                  assert.isTrue(ids.includes(key), key)
                }
              }
              assert.isTrue(Exit.isSuccess(exits[6]!))
              // k02 was in the statement that was cut off, and had no guard.
              assert.isTrue(Exit.isFailure(exits[2]!))
              // Guarded units were in it too, and ran again.
              assert.isAbove([...guarded].filter((key) => runs.get(key) === 2).length, 0)
            })
        )
      }

      // Last: the groups after it run as transactions.
      it.effect("that write at once run again alone, and the groups after them run as transactions", () =>
        Effect.gen(function* () {
          const { shared } = yield* Transactions
          const table = yield* freshTable
          const first = keys(8)
          const { runs, count } = runCounter()
          yield* sharedTogether(first, (key) => shared(key, count(key).pipe(Effect.andThen(table.insertNow(key)))))
          assert.deepStrictEqual(yield* table.ids, first)
          assert.isAbove([...runs.values()].filter((n) => n === 2).length, 0)
          // The next ones that arrive together share a transaction: their reads see one.
          const next = keys(12).map((key) => `next-${key}`)
          const seen = yield* together(next, (key) =>
            shared(key, Effect.andThen(table.insertNow(key), table.transaction))
          )
          assert.isBelow(new Set(seen).size, next.length)
        })
      )
    }))
}

describe("shared units with the database unreachable", () =>
  layer(
    Layer.provideMerge(
      TransactionsSql,
      Database.layerPostgres({ url: Redacted.make("postgres://postgres@127.0.0.1:1/none"), connectTimeout: "1 second" })
    ),
    { excludeTestServices: true }
  )((it) => {
    it.effect("each fail on its own, none is left waiting for a transaction that never began", () =>
      Effect.gen(function* () {
        const { shared } = yield* Transactions
        const sql = yield* SqlClient.SqlClient
        const exits = yield* together(keys(6), (key) => Effect.exit(shared(key, sql`SELECT 1`)))
        for (const exit of exits) assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause))
      })
    )
  }))
