import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, ManagedRuntime, Result } from "effect"
import fc from "fast-check"
import * as Q from "../../core/tasks/Query.ts"
import { RecordStore } from "../../core/tasks/RecordStore.ts"
import { Proposals } from "../../core/tasks/Proposals.ts"
import type { TaskInbox } from "../../core/tasks/TaskInbox.ts"
import { TasksUseCases } from "../../apps/server/tasks/TasksRuntime.ts"
import { Tasks, type TaskUser } from "../../core/tasks/Tasks.ts"
import { pglite, sqlBackends } from "../support/Databases.ts"
import {
  opsKey,
  publicUrl,
  tasksAirtableData,
  tasksMemoryData,
  tasksSqlData,
  type TasksData
} from "../support/TasksStack.ts"

/** Where a store call waits for its turn; outside a race every call goes at once. */
let turn: (label: string) => Promise<void> = () => Promise.resolve()

/**
 * The record store with a turn before every call, so that fast-check's scheduler picks the order in which
 * the calls of racing commands reach the store (a read of one between the read and the write of another).
 */
const takingTurns = (store: RecordStore["Service"]): RecordStore["Service"] => {
  const wait = (label: string) => Effect.promise(() => turn(label))
  return RecordStore.of({
    create: (table, fields) => Effect.andThen(wait(`create ${table}`), store.create(table, fields)),
    createUnread: (table, fields) => Effect.andThen(wait(`create ${table}`), store.createUnread(table, fields)),
    inUnits: store.inUnits,
    get: (table, id) => Effect.andThen(wait(`get ${table}`), store.get(table, id)),
    update: (table, id, fields) => Effect.andThen(wait(`update ${table}`), store.update(table, id, fields)),
    updateIf: (update) => Effect.andThen(wait(`updateIf ${update.table}`), store.updateIf(update)),
    updateIfAndWrite: (update, then) =>
      Effect.andThen(wait(`updateIfAndWrite ${update.table}`), store.updateIfAndWrite(update, then)),
    select: (table, query, options) => Effect.andThen(wait(`select ${table}`), store.select(table, query, options))
  })
}

/** The task inbox use cases over `data`, their record store taking turns. */
const racingStack = (data: TasksData) =>
  TasksUseCases(
    { publicUrl, machineKeys: [opsKey] },
    Layer.effectContext(
      Effect.map(Effect.context<RecordStore>(), (context) =>
        Context.add(context, RecordStore, takingTurns(Context.get(context, RecordStore)))
      )
    ).pipe(Layer.provideMerge(data))
  )

type Command =
  | { readonly _tag: "Accept"; readonly byOwner: boolean }
  | { readonly _tag: "Reject"; readonly byOwner: boolean; readonly reason: string }

const ownerCommand: fc.Arbitrary<Command> = fc.oneof(
  fc.constant({ _tag: "Accept" as const, byOwner: true }),
  fc.string({ minLength: 1, maxLength: 8 }).map((reason) => ({ _tag: "Reject" as const, byOwner: true, reason }))
)
const strangerCommand: fc.Arbitrary<Command> = fc.oneof(
  fc.constant({ _tag: "Accept" as const, byOwner: false }),
  fc.constant({ _tag: "Reject" as const, byOwner: false, reason: "not mine" })
)
/** Two to five resolutions by the owner, and a few by someone else, in any order. */
const commandsArb = fc
  .tuple(fc.array(ownerCommand, { minLength: 2, maxLength: 5 }), fc.array(strangerCommand, { maxLength: 2 }))
  .chain(([own, others]) => fc.shuffledSubarray([...own, ...others], { minLength: own.length + others.length }))

const kindArb = fc.constantFrom("create_task", "change_status")

const backends = [
  { name: "memory", data: () => tasksMemoryData, numRuns: 200 },
  ...sqlBackends.map((backend) => ({ name: backend.name, data: () => tasksSqlData(backend), numRuns: 40 })),
  // Each run is some tens of requests to the stand-in (without Airtable's rate here: the e2e race test keeps it).
  { name: "airtable stand-in", data: () => tasksAirtableData(pglite), numRuns: 15 }
]

describe.each(backends)("proposals resolve once under racing commands (property, $name)", (backend) => {
  let runtime: ManagedRuntime.ManagedRuntime<TaskInbox | RecordStore, unknown>
  beforeAll(() => {
    runtime = ManagedRuntime.make(racingStack(backend.data()))
  })
  afterAll(() => runtime.dispose())

  it("of accepts and rejects racing on one proposal, one wins, the others are 409 with what it became", async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), kindArb, commandsArb, async (s, kind, commands) => {
        const setup = Effect.gen(function* () {
          const tasks = yield* Tasks
          const proposals = yield* Proposals
          const records = yield* RecordStore
          const person = (name: string) =>
            Effect.map(
              records.create("collaborators", { email: `${name}.${crypto.randomUUID()}@example.com`, name }),
              (r): TaskUser => ({ id: r.id, email: String(r.fields["email"]), name })
            )
          const owner = yield* person("owner")
          const stranger = yield* person("stranger")
          const task = yield* tasks.create(owner, { title: "Target" })
          const proposal = yield* proposals.create(owner, {
            taskId: task.id,
            type: "t",
            proposedChangesObj:
              kind === "create_task"
                ? { action: "create_task", title: "Proposed task" }
                : { action: "change_status", status: "Done" }
          })
          return { tasks, proposals, records, owner, stranger, task, proposal }
        })
        const { tasks, proposals, records, owner, stranger, task, proposal } = await runtime.runPromise(setup)

        const race = Effect.forEach(
          commands,
          (command) => {
            const user = command.byOwner ? owner : stranger
            return Effect.result(
              command._tag === "Accept"
                ? Effect.map(proposals.accept(user, proposal.id), (r) => r.proposal.aiStatus)
                : Effect.map(proposals.reject(user, proposal.id, command.reason), (p) => p.aiStatus)
            )
          },
          { concurrency: "unbounded" }
        )
        turn = (label) => s.schedule(Promise.resolve(), label)
        const outcomes = await s.waitFor(runtime.runPromise(race)).finally(() => {
          turn = () => Promise.resolve()
        })

        const winners = commands.flatMap((command, i) => (Result.isSuccess(outcomes[i]!) ? [command] : []))
        assert.lengthOf(winners, 1, "exactly one command resolves the proposal")
        const winner = winners[0]!
        assert.isTrue(winner.byOwner, "only the owner resolves it")
        const became = winner._tag === "Accept" ? "Accepted" : "Rejected"
        commands.forEach((command, i) => {
          const outcome = outcomes[i]!
          if (Result.isSuccess(outcome)) assert.strictEqual(outcome.success, became)
          else if (!command.byOwner) assert.strictEqual(outcome.failure._tag, "Forbidden")
          else assert.deepInclude(outcome.failure, { _tag: "ProposalNotOpen", aiStatus: became })
        })

        const stored = await runtime.runPromise(
          Effect.gen(function* () {
            return {
              proposal: yield* records.get("proposals", proposal.id),
              task: yield* tasks.get(owner, task.id),
              created: yield* records.select("tasks", Q.eq("originDetail", `Proposal ${proposal.id}`))
            }
          })
        )
        assert.strictEqual(stored.proposal?.fields["aiStatus"], became)
        if (winner._tag === "Reject") assert.strictEqual(stored.proposal?.fields["rejectionReason"], winner.reason)
        else assert.notProperty(stored.proposal?.fields, "rejectionReason")
        const accepted = became === "Accepted"
        assert.lengthOf(stored.created, kind === "create_task" && accepted ? 1 : 0, "tasks the proposal created")
        assert.strictEqual(stored.task.status, kind === "change_status" && accepted ? "Done" : "Ready to Start")
      }),
      { numRuns: backend.numRuns }
    )
  }, 120_000)
})
