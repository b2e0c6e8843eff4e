import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import * as Q from "../../core/tasks/Query.ts"
import { RecordStore } from "../../core/tasks/RecordStore.ts"
import type { Task } from "../../core/tasks/Task.ts"
import { Proposals } from "../../core/tasks/Proposals.ts"
import { Tasks, type TaskUser } from "../../core/tasks/Tasks.ts"
import { Priorities, Statuses } from "../../core/tasks/Values.ts"
import { tasksMemoryData, tasksStack } from "../support/TasksStack.ts"

/** Any mix of upper and lower case. */
const caseOf = (value: string) =>
  fc
    .array(fc.boolean(), { minLength: value.length, maxLength: value.length })
    .map((upper) => [...value].map((c, i) => (upper[i] ? c.toUpperCase() : c.toLowerCase())).join(""))

const date = fc
  .date({ min: new Date("2020-01-01T00:00:00Z"), max: new Date("2030-12-31T00:00:00Z"), noInvalidDate: true })
  .map((d) => d.toISOString().slice(0, 10))
const text = (max: number) =>
  fc.string({ minLength: 1, maxLength: max }).filter((s) => s.trim() === s && s.length > 0 && !s.includes("\u0000"))

/** A proposed change as it is sent, with what the task should look like after: `expect(before, people)`. */
interface Case {
  readonly sent: Record<string, unknown>
  readonly expect: (before: Task, other: TaskUser) => Task
}

const changeArb: fc.Arbitrary<Case> = fc.oneof(
  fc.constantFrom(...Statuses).chain((status) =>
    caseOf(status).map((input) => ({
      sent: { action: "change_status", status: input },
      expect: (before: Task) => ({ ...before, status })
    }))
  ),
  fc.constantFrom(...Priorities).chain((priority) =>
    caseOf(priority).map((input) => ({
      sent: { action: "change_priority", priority: input },
      expect: (before: Task) => ({ ...before, priority })
    }))
  ),
  fc.constant({
    sent: { action: "reassign" },
    expect: (before: Task, other: TaskUser) => ({ ...before, assignedTo: other })
  }),
  fc.option(date, { nil: null }).map((dueDate) => ({
    sent: { action: "change_due_date", dueDate },
    expect: (before: Task) => ({ ...before, dueDate })
  })),
  fc.option(date, { nil: null }).map((startDate) => ({
    sent: { action: "change_start_date", startDate },
    expect: (before: Task) => ({ ...before, startDate })
  })),
  fc.string({ maxLength: 500 }).map((description) => ({
    sent: { action: "change_description", description },
    expect: (before: Task) => ({ ...before, description })
  })),
  text(120).map((title) => ({
    sent: { action: "change_title", title },
    expect: (before: Task) => ({ ...before, title })
  })),
  fc.option(fc.double({ min: 0, max: 1000, noNaN: true }), { nil: null }).map((hoursEstimated) => ({
    sent: { action: "change_estimate", hoursEstimated },
    expect: (before: Task) => ({ ...before, hoursEstimated })
  })),
  fc.constant({ sent: { action: "archive_task" }, expect: (before: Task) => ({ ...before, isArchived: true }) })
)

/** The task before the proposal: a few fields set, so a change that touches too much shows. */
const taskArb = fc.record({
  status: fc.constantFrom(...Statuses.filter((s) => s !== "Done" && s !== "Cancelled")),
  priority: fc.constantFrom(...Priorities),
  dueDate: fc.option(date, { nil: null }),
  startDate: fc.option(date, { nil: null }),
  hoursEstimated: fc.option(fc.integer({ min: 0, max: 40 }), { nil: null }),
  description: fc.string({ maxLength: 40 }),
  triageNotes: fc.string({ maxLength: 40 })
})

const setup = Effect.gen(function* () {
  const records = yield* RecordStore
  const person = (n: string) =>
    Effect.map(records.create("collaborators", { email: `${n}@example.com`, name: n }), (r) => ({
      id: r.id,
      email: `${n}@example.com`,
      name: n
    }))
  return {
    tasks: yield* Tasks,
    proposals: yield* Proposals,
    records,
    owner: yield* person("owner"),
    other: yield* person("other")
  }
})

describe("proposals (property)", () => {
  it("accepting a proposal applies exactly its change to its task and nothing else", () =>
    fc.assert(
      fc.asyncProperty(taskArb, changeArb, (initial, change) =>
        Effect.runPromise(
          Effect.gen(function* () {
            const { tasks, proposals, records, owner, other } = yield* setup
            const created = yield* tasks.create(owner, { title: "Target" })
            const before = yield* tasks.update(owner, created.id, initial)
            const bystander = yield* tasks.create(owner, { title: "Bystander" })
            const sent =
              change.sent["action"] === "reassign" ? { ...change.sent, assignedTo: other.email } : change.sent
            const proposal = yield* proposals.create(owner, {
              taskId: before.id,
              type: "t",
              proposedChangesObj: sent
            })
            const accepted = yield* proposals.accept(owner, proposal.id)
            const expected = change.expect(before, other)
            assert.deepStrictEqual(accepted.task, expected)
            // Read back through the party who can still see it (the requester stays the owner).
            assert.deepStrictEqual(yield* tasks.get(owner, before.id), expected)
            assert.deepStrictEqual(yield* tasks.get(owner, bystander.id), bystander)
            assert.strictEqual(accepted.proposal.aiStatus, "Accepted")
            assert.lengthOf(yield* records.select("tasks", Q.all), 2)
          }).pipe(Effect.provide(Layer.merge(tasksStack(tasksMemoryData), TestClock.layer())))
        )
      ),
      { numRuns: 150 }
    ))

  it("a create_task proposal creates one task with its fields and changes no other task", () =>
    fc.assert(
      fc.asyncProperty(
        text(120),
        fc.string({ maxLength: 500 }),
        fc.constantFrom(...Priorities),
        fc.option(date, { nil: null }),
        (title, description, priority, dueDate) =>
          Effect.runPromise(
            Effect.gen(function* () {
              const { tasks, proposals, records, owner, other } = yield* setup
              const existing = yield* tasks.create(owner, { title: "Existing" })
              const project = yield* records.create("projects", { name: "P" })
              const proposal = yield* proposals.create(owner, {
                projectId: project.id,
                type: "New task",
                proposedChangesObj: {
                  action: "create_task",
                  title,
                  description,
                  priority,
                  dueDate,
                  assignedTo: other.id
                }
              })
              const { task } = yield* proposals.accept(owner, proposal.id)
              assert.deepInclude(task, {
                title,
                description,
                priority,
                dueDate,
                status: "Ready to Start",
                triageStatus: "New",
                origin: "AI Agent",
                isArchived: false
              })
              assert.deepStrictEqual(task.assignedTo, other)
              assert.deepStrictEqual(task.requestedBy, owner)
              assert.deepStrictEqual(task.project, [project.id])
              assert.deepStrictEqual(yield* tasks.get(owner, existing.id), existing)
              assert.lengthOf(yield* records.select("tasks", Q.all), 2)
            }).pipe(Effect.provide(Layer.merge(tasksStack(tasksMemoryData), TestClock.layer())))
          )
      ),
      { numRuns: 60 }
    ))
})
