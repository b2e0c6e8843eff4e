import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { RecordWriteGuards } from "../../core/tasks/RecordWriteGuards.ts"
import * as Q from "../../core/tasks/Query.ts"
import { RecordConflict, RecordStore, type FollowingWrite, type GuardedUpdate } from "../../core/tasks/RecordStore.ts"
import { airtableOnStandIn } from "../support/AirtableStore.ts"
import { sqlBackends } from "../support/Databases.ts"

class Crash {
  readonly _tag = "Crash"
}

const resolve = (id: string, aiStatus: "Accepted" | "Rejected"): GuardedUpdate => ({
  table: "proposals",
  id,
  expected: { aiStatus: "To Consider" },
  fields: { aiStatus }
})

/**
 * A writer that notes its write, makes the upstream writes `done` of it, and then dies (the process crashed):
 * its lock goes with it, its note stays.
 */
const crashedAfter = (update: GuardedUpdate, following: FollowingWrite, done: Effect.Effect<unknown, unknown>) =>
  Effect.gen(function* () {
    const guards = yield* RecordWriteGuards
    const exit = yield* Effect.exit(
      guards.holding(update.table, update.id, (held) =>
        Effect.gen(function* () {
          yield* held.note({ update, following })
          yield* done
          return yield* Effect.fail(new Crash())
        })
      )
    )
    assert.isTrue(exit._tag === "Failure")
  })

for (const backend of sqlBackends) {
  describe(`guarded writes on Airtable finish what a crash left half done (guards on ${backend.name})`, () =>
    layer(airtableOnStandIn({ backend }), { excludeTestServices: true, timeout: "60 seconds" })((it) => {
      it.effect("an accept that created its task and crashed wins over a reject sent after: one task, Accepted", () =>
        Effect.gen(function* () {
          const records = yield* RecordStore
          const proposal = yield* records.create("proposals", { aiStatus: "To Consider" })
          const createTask: FollowingWrite = {
            _tag: "Create",
            table: "tasks",
            fields: { title: "From the proposal" },
            linkedBy: "proposal"
          }
          yield* crashedAfter(
            resolve(proposal.id, "Accepted"),
            createTask,
            records.create("tasks", { title: "From the proposal", proposal: [proposal.id] })
          )
          const conflict = yield* Effect.flip(records.updateIf(resolve(proposal.id, "Rejected")))
          assert.instanceOf(conflict, RecordConflict)
          assert.strictEqual((conflict as RecordConflict).fields["aiStatus"], "Accepted")
          const tasks = yield* records.select("tasks", Q.has("proposal", proposal.id))
          assert.deepStrictEqual(
            tasks.map((t) => t.fields["title"]),
            ["From the proposal"]
          )
          assert.strictEqual((yield* records.get("proposals", proposal.id))?.fields["aiStatus"], "Accepted")
        })
      )

      it.effect("an accept that crashed before its first upstream write is made once by the next accept's writer", () =>
        Effect.gen(function* () {
          const records = yield* RecordStore
          const proposal = yield* records.create("proposals", { aiStatus: "To Consider" })
          const createTask = (title: string): FollowingWrite => ({
            _tag: "Create",
            table: "tasks",
            fields: { title },
            linkedBy: "proposal"
          })
          yield* crashedAfter(resolve(proposal.id, "Accepted"), createTask("Noted"), Effect.void)
          const again = yield* Effect.flip(
            records.updateIfAndWrite(resolve(proposal.id, "Accepted"), createTask("Second attempt"))
          )
          assert.instanceOf(again, RecordConflict)
          const tasks = yield* records.select("tasks", Q.has("proposal", proposal.id))
          assert.deepStrictEqual(
            tasks.map((t) => t.fields["title"]),
            ["Noted"]
          )
        })
      )

      it.effect(
        "an accept changing a task that crashed between its writes is finished: the task changed, Accepted",
        () =>
          Effect.gen(function* () {
            const records = yield* RecordStore
            const task = yield* records.create("tasks", { title: "Target", status: "Ready to Start" })
            const proposal = yield* records.create("proposals", { aiStatus: "To Consider", task: [task.id] })
            const change: FollowingWrite = { _tag: "Update", table: "tasks", id: task.id, fields: { status: "Done" } }
            yield* crashedAfter(
              resolve(proposal.id, "Accepted"),
              change,
              records.update("tasks", task.id, { status: "Done" })
            )
            const conflict = yield* Effect.flip(records.updateIf(resolve(proposal.id, "Rejected")))
            assert.instanceOf(conflict, RecordConflict)
            assert.strictEqual((yield* records.get("proposals", proposal.id))?.fields["aiStatus"], "Accepted")
            assert.strictEqual((yield* records.get("tasks", task.id))?.fields["status"], "Done")
            // The note is cleared: the next write checks its expectation alone.
            const other = yield* records.create("proposals", { aiStatus: "To Consider" })
            assert.strictEqual((yield* records.updateIf(resolve(other.id, "Rejected")))?.fields["aiStatus"], "Rejected")
          })
      )
    }))
}
