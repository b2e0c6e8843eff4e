import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import {
  AcceptTaskBody,
  BulkTriageBody,
  DelegateTaskBody,
  NeedsInfoBody,
  RejectTaskBody
} from "../../core/tasks/TriageInput.ts"
import { decodeBody, statusMessage } from "../support/TaskInputs.ts"

describe("the triage bodies", () => {
  it("accept: a project, and a status in any case", () => {
    assert.deepStrictEqual(
      decodeBody(AcceptTaskBody, { projectId: "rec1", status: " IN PROGRESS" }),
      Result.succeed({ projectId: "rec1", status: "In Progress" })
    )
    assert.deepStrictEqual(decodeBody(AcceptTaskBody, { projectId: "rec1" }), Result.succeed({ projectId: "rec1" }))
    assert.deepStrictEqual(decodeBody(AcceptTaskBody, {}), Result.fail({ projectId: "Required" }))
    assert.deepStrictEqual(
      decodeBody(AcceptTaskBody, { projectId: 5, status: "Shipped" }),
      Result.fail({ projectId: "Expected string", status: statusMessage })
    )
  })

  it("reject needs a reason, needs-info a note, delegate the collaborator", () => {
    assert.deepStrictEqual(decodeBody(RejectTaskBody, {}), Result.fail({ reason: "Required" }))
    assert.deepStrictEqual(decodeBody(RejectTaskBody, { reason: "no" }), Result.succeed({ reason: "no" }))
    assert.deepStrictEqual(decodeBody(NeedsInfoBody, { note: 7 }), Result.fail({ note: "Expected string" }))
    assert.deepStrictEqual(
      decodeBody(DelegateTaskBody, { reason: 5 }),
      Result.fail({ assignedTo: "Required", reason: "Expected string" })
    )
    assert.deepStrictEqual(
      decodeBody(DelegateTaskBody, { assignedTo: "bob@example.com" }),
      Result.succeed({ assignedTo: "bob@example.com" })
    )
  })

  it("bulk: an action in any case, at most 100 tasks, and a project for accept", () => {
    assert.deepStrictEqual(
      decodeBody(BulkTriageBody, { taskIds: ["a", "b"], action: " DONE " }),
      Result.succeed({ taskIds: ["a", "b"], action: "done" })
    )
    assert.deepStrictEqual(
      decodeBody(BulkTriageBody, { taskIds: ["a"], action: "Accept", projectIds: ["p", "q"] }),
      Result.succeed({ taskIds: ["a"], action: "accept", projectIds: ["p", "q"] })
    )
    for (const projectIds of [undefined, []]) {
      assert.deepStrictEqual(
        decodeBody(BulkTriageBody, { taskIds: ["a"], action: "accept", projectIds }),
        Result.fail({ projectIds: "Required for accept: at least one project id" })
      )
    }
    assert.deepStrictEqual(
      decodeBody(BulkTriageBody, { taskIds: ["a"], action: "delete" }),
      Result.fail({ action: "Must be one of: accept, reject, done" })
    )
    assert.deepStrictEqual(
      decodeBody(BulkTriageBody, { taskIds: Array.from({ length: 101 }, (_, i) => `t${i}`), action: "zap" }),
      Result.fail({
        taskIds: "Expected a value with a length of at most 100",
        action: "Must be one of: accept, reject, done"
      })
    )
    assert.deepStrictEqual(
      decodeBody(BulkTriageBody, { taskIds: [1], reason: 5 }),
      Result.fail({ "taskIds.0": "Expected string", action: "Required", reason: "Expected string" })
    )
  })
})
