import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { ProposalActions, ProposalBody, ProposalChange, storedForm } from "../../core/tasks/ProposalInput.ts"
import { decodeBody, priorityMessage, statusMessage } from "../support/TaskInputs.ts"

const actions = `Must be one of: ${ProposalActions.join(", ")}`
const body = (proposedChangesObj: unknown, more: Record<string, unknown> = { taskId: "recT" }) => ({
  ...more,
  type: "Meeting",
  proposedChangesObj
})

describe("a proposed change", () => {
  it("is decoded to its action's fields, canonical; members of other actions are dropped", () => {
    assert.deepStrictEqual(
      decodeBody(ProposalChange, { action: "change_priority", priority: " High", title: "dropped" }),
      Result.succeed({ action: "change_priority", priority: "P1: Top Priority" })
    )
    assert.deepStrictEqual(
      decodeBody(ProposalChange, { action: "change_status", status: "done" }),
      Result.succeed({ action: "change_status", status: "Done" })
    )
    assert.deepStrictEqual(
      decodeBody(ProposalChange, { action: "change_due_date", dueDate: null }),
      Result.succeed({ action: "change_due_date", dueDate: null })
    )
    assert.deepStrictEqual(
      decodeBody(ProposalChange, { action: "change_estimate", hoursEstimated: 2 }),
      Result.succeed({ action: "change_estimate", hoursEstimated: 2 })
    )
    assert.deepStrictEqual(
      decodeBody(ProposalChange, { action: "archive_task", extra: 1 }),
      Result.succeed({ action: "archive_task" })
    )
  })

  it("a new task's absent description, priority and due date are stored with their defaults", () => {
    const change = Result.getOrThrow(decodeBody(ProposalChange, { action: "create_task", title: " Draft " }))
    assert.deepStrictEqual(change, { action: "create_task", title: "Draft" })
    assert.deepStrictEqual(storedForm(change as ProposalChange), {
      action: "create_task",
      title: "Draft",
      description: "",
      priority: "P2: Medium Priority",
      dueDate: null
    })
  })

  it("names the action first: not an object, a missing or unknown action", () => {
    for (const change of [[1], null, "create_task", 5]) {
      assert.deepStrictEqual(
        decodeBody(ProposalChange, change),
        Result.fail({ body: "Must be an object with an action" }),
        JSON.stringify(change)
      )
    }
    for (const change of [{}, { action: "explode" }, { action: 5 }, { action: "toString" }]) {
      assert.deepStrictEqual(
        decodeBody(ProposalChange, change),
        Result.fail({ action: actions }),
        JSON.stringify(change)
      )
    }
  })

  it("answers each field of the action: a text it needs is 'Required, a string', an estimate 'Must be a number'", () => {
    const cases: ReadonlyArray<readonly [unknown, Record<string, string>]> = [
      [{ action: "change_status", status: "Shipped" }, { status: statusMessage }],
      [{ action: "change_status" }, { status: "Required, a string" }],
      [{ action: "reassign" }, { assignedTo: "Required, a string" }],
      [{ action: "change_due_date" }, { dueDate: "Required, a string" }],
      [{ action: "change_start_date", startDate: 5 }, { startDate: "Required, a string" }],
      [{ action: "change_start_date", startDate: "2026-02-30" }, { startDate: "Must be a date as YYYY-MM-DD" }],
      [
        { action: "change_description", description: "x".repeat(501) },
        { description: "Must be at most 500 characters" }
      ],
      [{ action: "change_title", title: "x".repeat(121) }, { title: "Must be at most 120 characters" }],
      [{ action: "change_title", title: 5 }, { title: "Required, a string" }],
      [{ action: "change_estimate" }, { hoursEstimated: "Must be a number" }],
      [{ action: "change_estimate", hoursEstimated: "3" }, { hoursEstimated: "Must be a number" }],
      [{ action: "change_estimate", hoursEstimated: -3 }, { hoursEstimated: "Must be a number of hours, 0 or more" }]
    ]
    for (const [change, fields] of cases) {
      assert.deepStrictEqual(decodeBody(ProposalChange, change), Result.fail(fields), JSON.stringify(change))
    }
  })

  it("answers every bad field of a new task at once", () => {
    assert.deepStrictEqual(
      decodeBody(ProposalChange, {
        action: "create_task",
        title: "  ",
        description: 5,
        priority: "zz",
        assignedTo: 3,
        dueDate: "soon"
      }),
      Result.fail({
        title: "Required",
        description: "Required, a string",
        priority: priorityMessage,
        assignedTo: "Required, a string",
        dueDate: "Must be a date as YYYY-MM-DD"
      })
    )
  })
})

describe("the proposal body", () => {
  it("names its change's fields under proposedChangesObj; its type is trimmed", () => {
    assert.deepStrictEqual(
      decodeBody(ProposalBody, body({ action: "change_priority", priority: "urgent" }, { taskId: "recT" })),
      Result.succeed({
        taskId: "recT",
        type: "Meeting",
        proposedChangesObj: { action: "change_priority", priority: "P0: Urgent & Critical" }
      })
    )
    assert.deepStrictEqual(
      decodeBody(ProposalBody, { taskId: "recT", type: " x ", proposedChangesObj: { action: "archive_task" } }),
      Result.succeed({ taskId: "recT", type: "x", proposedChangesObj: { action: "archive_task" } })
    )
    assert.deepStrictEqual(
      decodeBody(ProposalBody, body({ action: "change_status", status: "Shipped" })),
      Result.fail({ "proposedChangesObj.status": statusMessage })
    )
    assert.deepStrictEqual(
      decodeBody(ProposalBody, body({ action: "explode" })),
      Result.fail({ "proposedChangesObj.action": actions })
    )
    assert.deepStrictEqual(
      decodeBody(ProposalBody, {}),
      Result.fail({ type: "Required", proposedChangesObj: "Required" })
    )
    assert.deepStrictEqual(
      decodeBody(ProposalBody, { type: " ", taskId: 5, proposedChangesObj: { action: "change_title", title: 5 } }),
      Result.fail({ type: "Required", taskId: "Expected string", "proposedChangesObj.title": "Required, a string" })
    )
  })

  it("needs a target, and a task for every action but create_task", () => {
    assert.deepStrictEqual(
      decodeBody(ProposalBody, body({ action: "create_task", title: "t" }, {})),
      Result.fail({ taskId: "At least one of taskId, projectId, outcomeId is required" })
    )
    assert.isTrue(
      Result.isSuccess(decodeBody(ProposalBody, body({ action: "create_task", title: "t" }, { outcomeId: "o" })))
    )
    assert.deepStrictEqual(
      decodeBody(ProposalBody, body({ action: "reassign", assignedTo: "a@b.c" }, { projectId: "p" })),
      Result.fail({ taskId: "Required for reassign" })
    )
  })
})
