import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { randomUUID } from "node:crypto"
import * as Q from "../../core/tasks/Query.ts"
import { RecordStore } from "../../core/tasks/RecordStore.ts"
import { Tasks, type TaskUser } from "../../core/tasks/Tasks.ts"
import type { Status, TriageStatus } from "../../core/tasks/Values.ts"
import { Statuses, TriageStatuses } from "../../core/tasks/Values.ts"
import { sqlBackends } from "../support/Databases.ts"
import { tasksMemoryData, tasksSqlData, tasksStack } from "../support/TasksStack.ts"

/**
 * The task inbox contract's lists against a model: random tasks and random operations by random users, then every list of
 * every user is compared with the rules as the spec writes them, and every user's reads with who is party to
 * each task. A user who is not party to a task can neither read nor change it.
 */

const dayMs = 86_400_000
const userCount = 3

type Op =
  | { readonly _tag: "create"; readonly by: number; readonly assignee: number }
  | {
      readonly _tag: "patch"
      readonly by: number
      readonly task: number
      readonly status?: Status
      readonly triage?: TriageStatus
    }
  | { readonly _tag: "accept" | "reject" | "needsInfo" | "archive"; readonly by: number; readonly task: number }
  | { readonly _tag: "delegate"; readonly by: number; readonly task: number; readonly to: number }
  | { readonly _tag: "bulkDone"; readonly by: number; readonly tasks: ReadonlyArray<number> }
  | { readonly _tag: "wait"; readonly days: number }

const user = fc.nat({ max: userCount - 1 })
const task = fc.nat({ max: 9 })
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ _tag: fc.constant("create" as const), by: user, assignee: user }), weight: 4 },
  fc.record(
    {
      _tag: fc.constant("patch" as const),
      by: user,
      task,
      status: fc.constantFrom(...Statuses),
      triage: fc.constantFrom(...TriageStatuses)
    },
    { requiredKeys: ["_tag", "by", "task"] }
  ),
  fc.record({
    _tag: fc.constantFrom("accept" as const, "reject" as const, "needsInfo" as const, "archive" as const),
    by: user,
    task
  }),
  fc.record({ _tag: fc.constant("delegate" as const), by: user, task, to: user }),
  fc.record({ _tag: fc.constant("bulkDone" as const), by: user, tasks: fc.array(task, { maxLength: 3 }) }),
  // Waits around the 30-day edges of the board and of history.
  {
    arbitrary: fc.record({ _tag: fc.constant("wait" as const), days: fc.constantFrom(1, 10, 29, 30, 31, 45) }),
    weight: 2
  }
)

/** The model of a task: only what the list rules read. */
interface ModelTask {
  id: string
  assignee: number
  requester: number
  status: Status
  triage: TriageStatus
  archived: boolean
  /** When it last became Done, as the model saw it. */
  doneAt: number | undefined
  /** When it last became resolved (Done, Cancelled or Rejected). */
  resolvedAt: number | undefined
}

const resolved = (t: Pick<ModelTask, "status" | "triage">) =>
  t.status === "Done" || t.status === "Cancelled" || t.triage === "Rejected"

const setState = (
  t: ModelTask,
  next: { status?: Status | undefined; triage?: TriageStatus | undefined },
  now: number
) => {
  const before = { status: t.status, triage: t.triage }
  if (next.status !== undefined) t.status = next.status
  if (next.triage !== undefined) t.triage = next.triage
  if (t.status === "Done" && before.status !== "Done") t.doneAt = now
  if (t.status !== "Done") t.doneAt = undefined
  if (resolved(t) && !resolved(before)) t.resolvedAt = now
  if (!resolved(t)) t.resolvedAt = undefined
}

const isParty = (t: ModelTask, u: number) => t.assignee === u || t.requester === u

/** The rules of the task inbox contract, "Endpoints", as the spec states them, over the model. */
const expectedLists = (tasks: ReadonlyArray<ModelTask>, u: number, now: number) => {
  const live = tasks.filter((t) => !t.archived)
  const ids = (ts: ReadonlyArray<ModelTask>) => ts.map((t) => t.id).sort()
  return {
    inbox: ids(live.filter((t) => t.assignee === u && t.triage === "New")),
    mine: ids(
      live.filter(
        (t) =>
          t.assignee === u &&
          t.status !== "Cancelled" &&
          t.triage !== "Rejected" &&
          (t.status !== "Done" || (t.doneAt !== undefined && t.doneAt >= now - 30 * dayMs))
      )
    ),
    sent: ids(live.filter((t) => t.requester === u && t.assignee !== u)),
    search: ids(live.filter((t) => isParty(t, u))),
    searchActive: ids(
      live.filter((t) => isParty(t, u) && (t.status === "Ready to Start" || t.status === "In Progress"))
    ),
    history: ids(
      live.filter((t) => isParty(t, u) && resolved(t) && t.resolvedAt !== undefined && t.resolvedAt >= now - 30 * dayMs)
    )
  }
}

const start = Date.parse("2026-03-01T09:00:00.000Z")

const run = (ops: ReadonlyArray<Op>) =>
  Effect.gen(function* () {
    yield* TestClock.setTime(start)
    const tasks = yield* Tasks
    const records = yield* RecordStore
    const users: Array<TaskUser> = []
    for (let i = 0; i < userCount; i++) {
      // Fresh people each run: a store shared across runs (SQL below) keeps earlier runs apart.
      const email = `user${i}.${randomUUID().slice(0, 8)}@example.com`
      const record = yield* records.create("collaborators", { email, name: `User ${i}` })
      users.push({ id: record.id, email, name: `User ${i}` })
    }
    const { project } = { project: yield* records.create("projects", { name: "Model project" }) }
    const model: Array<ModelTask> = []
    let now = start

    for (const op of ops) {
      const snapshot = new Map((yield* records.select("tasks", Q.all)).map((r) => [r.id, r.fields]))
      const target = "task" in op ? model[op.task % Math.max(model.length, 1)] : undefined
      const actor = "by" in op ? users[op.by]! : undefined
      const attempt = <A, E>(effect: Effect.Effect<A, E>) => Effect.result(effect)
      switch (op._tag) {
        case "create": {
          const created = yield* tasks.create(actor!, { title: "Task", assignedTo: users[op.assignee]!.email })
          model.push({
            id: created.id,
            assignee: op.assignee,
            requester: op.by,
            status: "Ready to Start",
            triage: "New",
            archived: false,
            doneAt: undefined,
            resolvedAt: undefined
          })
          break
        }
        case "wait":
          yield* TestClock.adjust(op.days * dayMs)
          now += op.days * dayMs
          break
        case "bulkDone": {
          const ids = op.tasks
            .map((i) => model[i % Math.max(model.length, 1)]?.id ?? "recNone")
            .filter((id) => id !== "recNone")
          const result = yield* tasks.bulk(actor!, { taskIds: ids, action: "done" })
          const expected = [...new Set(ids)].filter((id) =>
            isParty(
              model.find((t) => t.id === id)!,
              op.by
            )
          )
          assert.deepStrictEqual([...result.successful].sort(), expected.sort())
          for (const id of expected)
            setState(
              model.find((t) => t.id === id)!,
              { status: "Done" },
              now
            )
          break
        }
        default: {
          if (target === undefined) break
          const party = isParty(target, op.by)
          const outcome = yield* attempt(
            op._tag === "patch"
              ? tasks.update(actor!, target.id, { status: op.status, triageStatus: op.triage })
              : op._tag === "accept"
                ? tasks.accept(actor!, target.id, { projectId: project.id })
                : op._tag === "reject"
                  ? tasks.reject(actor!, target.id, "no")
                  : op._tag === "needsInfo"
                    ? tasks.needsInfo(actor!, target.id, "why?")
                    : op._tag === "archive"
                      ? tasks.archive(actor!, target.id)
                      : tasks.delegate(actor!, target.id, { assignedTo: users[(op as { to: number }).to]!.email })
          )
          // Isolation: a user not party to the task gets NotFound, and nothing changes.
          assert.strictEqual(outcome._tag, party ? "Success" : "Failure", `${op._tag} by party=${party}`)
          if (outcome._tag === "Failure") assert.strictEqual((outcome.failure as { _tag: string })._tag, "NotFound")
          if (!party) break
          if (op._tag === "patch") setState(target, { status: op.status, triage: op.triage }, now)
          if (op._tag === "accept") setState(target, { status: "Ready to Start", triage: "Accepted" }, now)
          if (op._tag === "reject") setState(target, { triage: "Rejected" }, now)
          if (op._tag === "needsInfo") setState(target, { triage: "Needs More Info" }, now)
          if (op._tag === "archive") target.archived = true
          if (op._tag === "delegate") target.assignee = op.to
        }
      }
      // Records of tasks the actor was not party to are untouched.
      if (actor !== undefined) {
        for (const r of yield* records.select("tasks", Q.all)) {
          const before = snapshot.get(r.id)
          if (before !== undefined && !isPartyBefore(before, actor.id)) assert.deepStrictEqual(r.fields, before)
        }
      }

      for (const [u, who] of users.entries()) {
        const expected = expectedLists(model, u, now)
        const ids = (list: ReadonlyArray<{ readonly id: string }>) => list.map((t) => t.id).sort()
        assert.deepStrictEqual(ids(yield* tasks.inbox(who)), expected.inbox, "inbox")
        assert.deepStrictEqual(ids(yield* tasks.mine(who)), expected.mine, "mine")
        assert.deepStrictEqual(ids(yield* tasks.sent(who)), expected.sent, "sent")
        assert.deepStrictEqual(ids(yield* tasks.search(who, { activeOnly: false })), expected.search, "search")
        assert.deepStrictEqual(ids(yield* tasks.search(who, { activeOnly: true })), expected.searchActive, "activeOnly")
        assert.deepStrictEqual(ids(yield* tasks.history(who, undefined)), expected.history, "history")
        for (const t of model) {
          const read = yield* Effect.result(tasks.get(who, t.id))
          assert.strictEqual(read._tag, isParty(t, u) ? "Success" : "Failure", "get")
        }
      }
    }
  })

const isPartyBefore = (fields: Readonly<Record<string, unknown>>, userId: string) =>
  [fields["assignedTo"], fields["requestedBy"]].some((link) => Array.isArray(link) && link.includes(userId))

const opsArb = fc.array(opArb, { minLength: 1, maxLength: 25 })

describe("task lists (property)", () => {
  it("list membership always follows the task inbox contract's rules, and no user reads or changes a task they are not party to", () =>
    fc.assert(
      fc.asyncProperty(opsArb, (ops) =>
        Effect.runPromise(run(ops).pipe(Effect.provide(Layer.merge(tasksStack(tasksMemoryData), TestClock.layer()))))
      ),
      { numRuns: 100 }
    ))
})

// The same property over the SQL adapters, on sampled runs against one database: the lists are query values
// the SQL store compiles, so this checks the compiled WHERE clauses against the rules, not only the memory store.
for (const backend of sqlBackends) {
  describe(`task lists (property, ${backend.name})`, () =>
    layer(tasksStack(tasksSqlData(backend)), { excludeTestServices: true, timeout: 120_000 })((it) => {
      it.effect(
        "list membership follows the rules and isolation holds over SQL too",
        () =>
          Effect.forEach(fc.sample(opsArb, { numRuns: 12, seed: 20261122 }), (ops) =>
            run(ops).pipe(Effect.provide(TestClock.layer()))
          ),
        { timeout: 120_000 }
      )
    }))
}
