import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { Tool } from "effect/ai"
import { DecisionsApi } from "../../adapters/http/decisions/Api.ts"
import { openApiDocument } from "../../adapters/http/OpenApiRoutes.ts"
import { RequestDecisionArguments } from "../../adapters/mcp/DecisionsMcp.ts"
import type { Decision } from "../../core/decisions/Decision.ts"
import { decisionPage } from "../../core/decisions/pages/DecisionPage.ts"

/**
 * Escalation ladders are part of what callers and agents see: the decisions OpenAPI document (from the HTTP
 * contract, which the typed client is made from too) and the `request_decision` tool's arguments.
 */

type JsonSchema = { readonly [key: string]: unknown }

const document = openApiDocument(DecisionsApi) as unknown as {
  components: { schemas: Record<string, JsonSchema> }
}
const schemas = document.components.schemas

/** A schema with `$ref`s to the document's components followed. */
const resolve = (schema: JsonSchema): JsonSchema => {
  const ref = schema["$ref"]
  return typeof ref === "string" ? resolve(schemas[ref.split("/").at(-1)!]!) : schema
}

const propertiesOf = (schema: JsonSchema) => resolve(schema)["properties"] as Record<string, JsonSchema>

describe("escalation in the contract", () => {
  it("the OpenAPI document shows escalation on decision, template and role creation, and on the decision", () => {
    for (const name of ["DecisionCreate", "TemplateCreate", "RoleCreate", "Decision", "Role", "Template"]) {
      assert.property(propertiesOf(schemas[name]!), "escalation", name)
    }
    const ladder = resolve(propertiesOf(schemas["DecisionCreate"]!)["escalation"]!)
    assert.strictEqual(ladder["maxItems"], 10)
    const step = propertiesOf(ladder["items"] as JsonSchema)
    assert.sameMembers(Object.keys(step), ["after", "action", "toRole", "toEmail"])
    assert.sameMembers(resolve(step["action"]!)["enum"] as Array<string>, ["remind", "route", "notify_admins"])
  })

  it("request_decision takes escalation, checked as the HTTP plane checks it", () => {
    const published = Tool.getJsonSchemaFromSchema(RequestDecisionArguments) as unknown as JsonSchema
    assert.property(published["properties"], "escalation")
    const decode = Schema.decodeUnknownExit(RequestDecisionArguments)
    const base = { title: "T", roleSlug: "finance", options: [{ label: "A" }, { label: "B" }], idempotencyKey: "k" }
    assert.strictEqual(decode({ ...base, escalation: [{ after: 60, action: "remind" }] })._tag, "Success")
    assert.strictEqual(decode({ ...base, escalation: [{ after: 60, action: "shout" }] })._tag, "Failure")
    assert.strictEqual(decode({ ...base, escalation: [{ after: 0, action: "remind" }] })._tag, "Failure")
  })

  it("the decision's page lists its ladder: each step, due or done", () => {
    const decision: Decision = {
      id: "01JDECISION0000000000000000",
      organizationId: "acme",
      callerName: "agent",
      roleSlug: "legal",
      status: "pending",
      title: "Refund?",
      facts: [],
      links: [],
      options: [
        { id: "a", label: "A" },
        { id: "b", label: "B" }
      ],
      urgency: "normal",
      infoRequests: [],
      assignmentHistory: [],
      escalation: [
        {
          after: 60,
          action: "remind",
          dueAt: "2030-01-01T00:01:00.000Z",
          ranAt: "2030-01-01T00:01:01.000Z",
          outcome: "done"
        },
        { after: 120, action: "route", toRole: "legal", dueAt: "2030-01-01T00:02:00.000Z" }
      ],
      createdAt: "2030-01-01T00:00:00.000Z",
      updatedAt: "2030-01-01T00:01:01.000Z",
      version: 1
    }
    const page = decisionPage({
      decision,
      routing: { assigneeCount: 1, unrouted: false },
      canAct: true,
      isAdmin: false,
      roles: []
    })
    const at = page.blocks.findIndex((b) => b.type === "heading" && b.text === "Escalation")
    assert.isAtLeast(at, 0)
    const list = page.blocks[at + 1] as { type: string; items: ReadonlyArray<{ title: string; subtitle?: string }> }
    assert.deepStrictEqual(
      list.items.map((i) => i.title),
      ["Remind the deciders", "Route to legal"]
    )
    assert.match(list.items[0]!.subtitle!, /^Done /)
    assert.match(list.items[1]!.subtitle!, /^Due /)
  })
})
