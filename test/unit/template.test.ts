import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { fill, placeholdersOf, raise, type Template } from "../../core/decisions/Template.ts"

const template: Template = {
  id: "t1",
  slug: "refund",
  name: "Refund",
  roleSlug: "finance",
  titleTemplate: "Refund {{order}} for {{ customer }}?",
  bodyTemplate: "Amount: {{amount}}",
  urgency: "urgent",
  options: [
    {
      id: "opt_refund",
      position: 0,
      label: "Refund",
      action: {
        type: "record_update",
        baseId: "appAAAAAAAAAAAAAA",
        tableId: "tblBBBBBBBBBBBBBB",
        fields: { Status: "Refunded by {{resolvedBy}} at {{resolvedAt}}", Note: "{{reason}}" }
      }
    },
    { id: "opt_keep", position: 1, label: "Keep" }
  ],
  createdAt: "2030-01-01T00:00:00.000Z",
  updatedAt: "2030-01-01T00:00:00.000Z"
}

describe("templates", () => {
  it("finds placeholders, with or without spaces, once each", () => {
    assert.deepStrictEqual(placeholdersOf("{{a}} {{ b }} {{a}} {not} {{1x}}"), ["a", "b"])
    assert.strictEqual(fill("{{a}}-{{ b }}-{{c}}", { a: "1", b: "2" }), "1-2-{{c}}")
  })

  it("raising fills title and body, turns every param into a fact, and keeps the option ids", () => {
    const params = { order: "1042", customer: "Ada", amount: "€120", recordId: "recAAAAAAAAAAAAAA", reason: "damaged" }
    const result = raise(template, params)
    assert.isTrue(Result.isSuccess(result))
    const { decision: input, actions } = Result.getOrThrow(result)
    assert.strictEqual(input.title, "Refund 1042 for Ada?")
    assert.strictEqual(input.body, "Amount: €120")
    assert.deepStrictEqual(
      input.facts,
      Object.entries(params).map(([label, value]) => ({ label, value }))
    )
    assert.deepStrictEqual(
      input.options.map((o) => o.id),
      ["opt_refund", "opt_keep"]
    )
    assert.strictEqual(input.urgency, "urgent")
    // The option's action targets the record named by its param, with params filled and the resolution's
    // placeholders kept for when it runs.
    assert.deepStrictEqual(actions, [
      {
        optionId: "opt_refund",
        target: {
          baseId: template.options[0]!.action!.baseId,
          tableId: template.options[0]!.action!.tableId,
          recordId: "recAAAAAAAAAAAAAA",
          fields: Object.fromEntries(
            Object.entries(template.options[0]!.action!.fields).map(([k, v]) => [k, fill(v, params)])
          )
        }
      }
    ])
    assert.isTrue(Object.values(actions[0]!.target.fields).some((v) => v.includes("{{resolvedBy}}")))
  })

  it("a placeholder with no param is refused, naming each missing param and where it is used", () => {
    const result = raise(template, { order: "1042" })
    assert.isTrue(Result.isFailure(result))
    if (Result.isFailure(result)) {
      assert.deepStrictEqual(result.failure.missing.map((m) => m.param).sort(), [
        "amount",
        "customer",
        "reason",
        "recordId"
      ])
      assert.include(
        result.failure.missing.map((m) => m.field),
        "options.0.action.recordIdParam"
      )
    }
  })
})

describe("templates: the record id of an action", () => {
  const base = { order: "1042", customer: "Ada", amount: "€1", reason: "x" }

  it("must be a record id of the store: `.`, `..`, a path or a near miss is refused, naming the param", () => {
    for (const recordId of [
      ".",
      "..",
      "../tblX",
      "recAAAA/../x",
      "recAAAAAAAAAAAAA",
      "recAAAAAAAAAAAAAAA",
      "rec?AAAAAAAAAAAA"
    ]) {
      const result = raise(template, { ...base, recordId })
      assert.isTrue(Result.isFailure(result), recordId)
      if (Result.isFailure(result)) {
        assert.deepStrictEqual(result.failure.missing, [])
        assert.deepStrictEqual(
          result.failure.invalid.map((i) => i.param),
          ["recordId"]
        )
      }
    }
    assert.isTrue(Result.isSuccess(raise(template, { ...base, recordId: "rec0123456789abcd" })))
  })
})
