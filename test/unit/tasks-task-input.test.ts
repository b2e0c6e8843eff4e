import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { CreateTaskBody, PatchTaskBody } from "../../core/tasks/TaskInput.ts"
import { decodeBody, priorityMessage, statusMessage, triageStatusMessage } from "../support/TaskInputs.ts"

const origins = "Must be one of: Human, AI Agent, Automation"

describe("the create task body", () => {
  it("is canonical: the title trimmed, values from any case or alias; other texts as sent", () => {
    assert.deepStrictEqual(
      decodeBody(CreateTaskBody, {
        title: "  Call the client ",
        description: "  as sent ",
        priority: "  HIGH ",
        origin: "ai agent",
        originDetail: " bot ",
        assignedTo: "bob@example.com",
        requestedBy: "usr1",
        project: "rec1",
        unknown: "dropped"
      }),
      Result.succeed({
        title: "Call the client",
        description: "  as sent ",
        priority: "P1: Top Priority",
        origin: "AI Agent",
        originDetail: " bot ",
        assignedTo: "bob@example.com",
        requestedBy: "usr1",
        project: "rec1"
      })
    )
    assert.deepStrictEqual(decodeBody(CreateTaskBody, { title: "t" }), Result.succeed({ title: "t" }))
  })

  it("accepts every priority alias and every canonical spelling", () => {
    for (const [given, canonical] of [
      ["p0", "P0: Urgent & Critical"],
      ["Critical", "P0: Urgent & Critical"],
      ["TOP", "P1: Top Priority"],
      ["normal", "P2: Medium Priority"],
      ["low", "P3: Low Priority"],
      ["lowest", "P4: Lowest Priority"],
      ["p4: lowest priority", "P4: Lowest Priority"]
    ]) {
      assert.deepStrictEqual(
        decodeBody(CreateTaskBody, { title: "t", priority: given }),
        Result.succeed({ title: "t", priority: canonical }),
        given
      )
    }
  })

  it("answers each bad field with its message", () => {
    const cases: ReadonlyArray<readonly [unknown, Record<string, string>]> = [
      [{}, { title: "Required" }],
      [{ title: "   " }, { title: "Required" }],
      [{ title: "x".repeat(121) }, { title: "Must be at most 120 characters" }],
      [{ title: 42 }, { title: "Expected string" }],
      [{ title: "t", description: "d".repeat(501) }, { description: "Must be at most 500 characters" }],
      [{ title: "t", priority: "someday" }, { priority: priorityMessage }],
      [{ title: "t", priority: "constructor" }, { priority: priorityMessage }],
      [{ title: "t", origin: "robot" }, { origin: origins }],
      [{ title: "t", origin: null }, { origin: "Expected string" }],
      [[], { body: "Expected CreateTaskBody" }],
      [null, { body: "Expected CreateTaskBody" }]
    ]
    for (const [body, fields] of cases) {
      assert.deepStrictEqual(decodeBody(CreateTaskBody, body), Result.fail(fields), JSON.stringify(body))
    }
    // A title of 120 characters once trimmed is fine.
    assert.isTrue(Result.isSuccess(decodeBody(CreateTaskBody, { title: ` ${"t".repeat(120)} ` })))
  })

  it("answers every bad field at once, type errors and rule errors alike", () => {
    assert.deepStrictEqual(
      decodeBody(CreateTaskBody, { title: 5, description: "d".repeat(501), priority: "someday", origin: "robot" }),
      Result.fail({
        title: "Expected string",
        description: "Must be at most 500 characters",
        priority: priorityMessage,
        origin: origins
      })
    )
  })

  it("takes a key whose value is undefined as absent (a TypeScript caller's optional field)", () => {
    assert.deepStrictEqual(
      decodeBody(CreateTaskBody, { title: "t", priority: undefined }),
      Result.succeed({ title: "t" })
    )
  })
})

describe("the patch task body", () => {
  it("is canonical; null clears the clearable fields (texts to empty, dates, estimate and project to null)", () => {
    assert.deepStrictEqual(
      decodeBody(PatchTaskBody, {
        title: " New ",
        priority: "urgent",
        status: "in progress",
        triageStatus: "needs more info",
        dueDate: "2026-12-24",
        startDate: null,
        hoursEstimated: 3.5,
        description: null,
        triageNotes: null,
        originDetail: null,
        project: null,
        assignedTo: "bob@example.com"
      }),
      Result.succeed({
        title: "New",
        priority: "P0: Urgent & Critical",
        status: "In Progress",
        triageStatus: "Needs More Info",
        dueDate: "2026-12-24",
        startDate: null,
        hoursEstimated: 3.5,
        description: "",
        triageNotes: "",
        originDetail: "",
        project: null,
        assignedTo: "bob@example.com"
      })
    )
    assert.deepStrictEqual(decodeBody(PatchTaskBody, {}), Result.succeed({}))
    assert.deepStrictEqual(decodeBody(PatchTaskBody, { hoursEstimated: 0 }), Result.succeed({ hoursEstimated: 0 }))
  })

  it("refuses null on the fields it cannot clear, and names every bad field", () => {
    assert.deepStrictEqual(
      decodeBody(PatchTaskBody, {
        title: null,
        priority: null,
        status: "Finished",
        triageStatus: "Maybe",
        assignedTo: null,
        dueDate: "24/12/2026",
        startDate: "2026-02-30",
        hoursEstimated: -1,
        description: "x".repeat(501),
        project: 5
      }),
      Result.fail({
        title: "Cannot be cleared",
        priority: "Cannot be cleared",
        status: statusMessage,
        triageStatus: triageStatusMessage,
        assignedTo: "Cannot be cleared",
        dueDate: "Must be a date as YYYY-MM-DD",
        startDate: "Must be a date as YYYY-MM-DD",
        hoursEstimated: "Must be a number of hours, 0 or more",
        description: "Must be at most 500 characters",
        project: "Expected string | null"
      })
    )
    assert.deepStrictEqual(decodeBody(PatchTaskBody, { title: "  " }), Result.fail({ title: "Required" }))
    assert.deepStrictEqual(
      decodeBody(PatchTaskBody, { hoursEstimated: "3" }),
      Result.fail({ hoursEstimated: "Expected number | null" })
    )
  })
})

describe("how a use case takes a body", () => {
  it("a value the body's schema decoded is taken as it is, not decoded again", () => {
    const decoded = Schema.decodeUnknownSync(CreateTaskBody)({ title: " Plan ", priority: "low" })
    assert.strictEqual(Result.getOrThrow(decodeBody(CreateTaskBody, decoded)), decoded)
    // As the HTTP contract decodes a JSON body: the schema's JSON codec, as the one member of a union.
    for (const schema of [CreateTaskBody, PatchTaskBody]) {
      const asContract = Schema.decodeUnknownSync(Schema.Union([Schema.toCodecJson(schema)]))({ title: " Plan " })
      assert.strictEqual(Result.getOrThrow(decodeBody(schema, asContract)), asContract)
    }
  })

  it("anything else is decoded with the schema: a plain object, even one shaped like a decoded value", () => {
    const plain = { title: " Plan " }
    const taken = Result.getOrThrow(decodeBody(CreateTaskBody, plain))
    assert.notStrictEqual(taken, plain)
    assert.deepStrictEqual(taken, { title: "Plan" })
    assert.deepStrictEqual(
      decodeBody(CreateTaskBody, { title: "x".repeat(121) }),
      Result.fail({ title: "Must be at most 120 characters" })
    )
  })
})
