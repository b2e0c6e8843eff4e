import { assert, describe, layer } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { RecordStoreMemory } from "../../adapters/memory/tasks/RecordStoreMemory.ts"
import { RecordStoreSql } from "../../adapters/sql/tasks/RecordStoreSql.ts"
import { TransactionsSql } from "../../adapters/sql/TransactionsSql.ts"
import { Transactions } from "../../core/kernel/Transactions.ts"
import * as Q from "../../core/tasks/Query.ts"
import { RecordStore, type GuardedUpdate } from "../../core/tasks/RecordStore.ts"
import { sqlBackendsBothWays } from "../support/Databases.ts"
import { contractFields, RecordStoreContract } from "./RecordStore.contract.ts"
import { tasksSqlOn } from "./tasks-sql-layers.ts"
import { airtableOnStandIn, withFields } from "../support/AirtableStore.ts"
import type { AirtableField } from "../../adapters/airtable/AirtableFields.ts"

RecordStoreContract("memory", RecordStoreMemory)
for (const backend of sqlBackendsBothWays) RecordStoreContract(backend.name, tasksSqlOn(RecordStoreSql, backend))

/** The suite's own fields, in the base beside the task inbox's. */
const contractBase = withFields(
  Object.fromEntries(
    Object.entries(contractFields).map(([table, fields]) => [
      table,
      fields.map(({ key, type }): AirtableField =>
        type === "text"
          ? { key, name: `Contract ${key}`, type: "singleLineText" }
          : type === "number"
            ? { key, name: `Contract ${key}`, type: "number", options: { precision: 2 } }
            : type === "checkbox"
              ? { key, name: `Contract ${key}`, type: "checkbox", options: { icon: "check", color: "greenBright" } }
              : { key, name: `Contract ${key}`, type: "multilineText", json: true }
      )
    ])
  )
)
// Over the stand-in without its rate limit (the limiter has tests of its own; the e2e tests keep the real one).
for (const backend of sqlBackendsBothWays) {
  RecordStoreContract(
    `airtable stand-in, guards on ${backend.name}`,
    airtableOnStandIn({ tables: contractBase, backend }),
    {
      typed: true
    }
  )
}

const accept = (id: string): GuardedUpdate => ({
  table: "proposals",
  id,
  expected: { aiStatus: "To Consider" },
  fields: { aiStatus: "Accepted" }
})
const createTask = (title: string) =>
  ({ _tag: "Create", table: "tasks", fields: { title }, linkedBy: "proposal" }) as const

class Undone {
  readonly _tag = "Undone"
}

// A guarded write joins the unit of work it runs in: its own transaction becomes a savepoint.
for (const backend of sqlBackendsBothWays) {
  describe(`RecordStoreSql inside a unit of work (${backend.name})`, () =>
    layer(tasksSqlOn(Layer.merge(RecordStoreSql, TransactionsSql), backend), { excludeTestServices: true })((it) => {
      it.effect("a conflict undoes only the guarded write's own part; the unit goes on and commits", () =>
        Effect.gen(function* () {
          const records = yield* RecordStore
          const { atomically } = yield* Transactions
          const resolved = yield* records.create("proposals", { aiStatus: "Rejected" })
          const other = yield* atomically(
            Effect.gen(function* () {
              const conflict = yield* Effect.flip(records.updateIfAndWrite(accept(resolved.id), createTask("No")))
              assert.strictEqual(conflict._tag, "RecordConflict")
              return yield* records.create("tasks", { title: "Written by the unit" })
            })
          )
          assert.deepStrictEqual(yield* records.get("tasks", other.id), other)
          assert.deepStrictEqual(yield* records.select("tasks", Q.has("proposal", resolved.id)), [])
        })
      )

      it.effect("a record created unread goes with its unit: kept when it commits, gone when it is undone", () =>
        Effect.gen(function* () {
          const records = yield* RecordStore
          const { atomically } = yield* Transactions
          const kept = yield* atomically(
            Effect.gen(function* () {
              const record = yield* records.createUnread("tasks", { title: "Kept" })
              // Held until the unit's end: the unit itself does not see its row (it is not to read it back).
              assert.isUndefined(yield* records.get("tasks", record.id))
              return record
            })
          )
          assert.deepStrictEqual(yield* records.get("tasks", kept.id), kept)
          let undoneId = ""
          const exit = yield* Effect.exit(
            atomically(
              Effect.gen(function* () {
                undoneId = (yield* records.createUnread("tasks", { title: "Undone" })).id
                return yield* Effect.fail(new Undone())
              })
            )
          )
          assert.isTrue(Exit.isFailure(exit))
          assert.isUndefined(yield* records.get("tasks", undoneId))
        })
      )

      it.effect("creates shared by units of the same moment are each kept once, also when the group is undone", () =>
        Effect.gen(function* () {
          const records = yield* RecordStore
          const { shared } = yield* Transactions
          const run = `run-${crypto.randomUUID()}`
          const outcomes = yield* Effect.forEach(
            Array.from({ length: 12 }, (_, i) => i),
            (i) =>
              Effect.exit(
                shared(
                  `create-${run}-${i}`,
                  Effect.gen(function* () {
                    const record = yield* records.createUnread("tasks", { run, n: i })
                    // One of them fails after its create: its group is undone and the others run again alone.
                    if (i === 5) return yield* Effect.fail(new Undone())
                    return record
                  })
                )
              ),
            { concurrency: "unbounded" }
          )
          const stored = yield* records.select("tasks", Q.eq("run", run))
          const created = outcomes.flatMap((exit) => (Exit.isSuccess(exit) ? [exit.value] : []))
          assert.strictEqual(created.length, 11)
          assert.isTrue(Exit.isFailure(outcomes[5]!))
          assert.sameMembers(
            stored.map((record) => record.id),
            created.map((record) => record.id)
          )
          for (const record of created) assert.deepStrictEqual(yield* records.get("tasks", record.id), record)
        })
      )

      it.effect("an undone unit undoes the accept and the task it created", () =>
        Effect.gen(function* () {
          const records = yield* RecordStore
          const { atomically } = yield* Transactions
          const proposal = yield* records.create("proposals", { aiStatus: "To Consider" })
          const exit = yield* Effect.exit(
            atomically(
              Effect.gen(function* () {
                yield* records.updateIfAndWrite(accept(proposal.id), createTask("Undone"))
                return yield* Effect.fail(new Undone())
              })
            )
          )
          assert.isTrue(Exit.isFailure(exit))
          assert.strictEqual((yield* records.get("proposals", proposal.id))?.fields["aiStatus"], "To Consider")
          assert.deepStrictEqual(yield* records.select("tasks", Q.has("proposal", proposal.id)), [])
        })
      )

      it.effect("accepts racing, each in a unit of its own, create one task", () =>
        Effect.gen(function* () {
          const records = yield* RecordStore
          const { atomically } = yield* Transactions
          const proposal = yield* records.create("proposals", { aiStatus: "To Consider" })
          const outcomes = yield* Effect.forEach(
            Array.from({ length: 8 }, (_, i) => i),
            (i) => Effect.exit(atomically(records.updateIfAndWrite(accept(proposal.id), createTask(`Attempt ${i}`)))),
            { concurrency: "unbounded" }
          )
          assert.lengthOf(outcomes.filter(Exit.isSuccess), 1)
          assert.lengthOf(yield* records.select("tasks", Q.has("proposal", proposal.id)), 1)
        })
      )
    }))
}
