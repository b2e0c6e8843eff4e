import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { DecisionsApi } from "../../adapters/http/decisions/Api.ts"
import { openApiDocument } from "../../adapters/http/OpenApiRoutes.ts"
import type { Decision } from "../../core/decisions/Decision.ts"
import { publicDecision } from "../../core/decisions/DecisionView.ts"
import { decisionPage } from "../../core/decisions/pages/DecisionPage.ts"
import { PageDocument, type Block } from "../../core/kernel/PageDocument.ts"

/** How a decision with a quorum is shown: in answers (with its tally), on its page, and in the OpenAPI document. */

const decision = (status: Decision["status"] = "pending"): Decision => ({
  id: "01JDECISION0000000000000000",
  organizationId: "org_1",
  callerName: "agent",
  roleSlug: "ops",
  status,
  title: "Ship it?",
  facts: [],
  links: [],
  options: [
    { id: "yes", label: "Ship" },
    { id: "no", label: "Hold" }
  ],
  urgency: "normal",
  infoRequests: [],
  assignmentHistory: [],
  quorum: {
    count: 3,
    votes: [
      { by: "ann@acme.test", kind: "chosen", optionId: "yes", at: "2026-01-01T10:00:00.000Z" },
      { by: "bob@acme.test", kind: "declined", rationale: "not yet", at: "2026-01-01T10:05:00.000Z" },
      { by: "cat@acme.test", kind: "chosen", optionId: "yes", at: "2026-01-01T10:07:00.000Z" }
    ]
  },
  createdAt: "2026-01-01T09:00:00.000Z",
  updatedAt: "2026-01-01T10:07:00.000Z",
  version: 3
})

const texts = (blocks: ReadonlyArray<Block>): string => JSON.stringify(blocks)

describe("a decision with a quorum, as shown", () => {
  it("answers carry the votes and a tally of every option and of Decline", () => {
    const shown = publicDecision(decision())
    assert.deepStrictEqual(shown.quorum?.tally, { options: { yes: 2, no: 0 }, declined: 1 })
    assert.deepStrictEqual(
      shown.quorum?.votes.map((v) => v.by),
      ["ann@acme.test", "bob@acme.test", "cat@acme.test"]
    )
    assert.strictEqual(shown.quorum?.count, 3)
  })

  it("the page shows the count needed, the tally and who voted for what; it is a valid page document", () => {
    const page = decisionPage({
      decision: decision(),
      routing: { assigneeCount: 3, unrouted: false },
      canAct: true,
      isAdmin: false,
      roles: []
    })
    Schema.decodeUnknownSync(PageDocument)(page)
    const shown = texts(page.blocks)
    assert.include(shown, "needs 3 matching votes")
    const table = page.blocks.find((b) => b.type === "table" && b.columns.some((c) => c.label === "Votes"))
    assert.deepStrictEqual(table?.type === "table" ? table.rows : [], [
      { answer: "Ship", votes: "2 of 3" },
      { answer: "Hold", votes: "0 of 3" },
      { answer: "Decline", votes: "1 of 3" }
    ])
    const voters = page.blocks.find((b) => b.type === "list" && b.items.some((i) => i.title === "bob@acme.test"))
    assert.deepStrictEqual(voters?.type === "list" ? voters.items.map((i) => [i.title, i.badge]) : [], [
      ["ann@acme.test", "Ship"],
      ["bob@acme.test", "Decline"],
      ["cat@acme.test", "Ship"]
    ])
  })

  it("a decision resolved by votes says whose votes resolved it", () => {
    const resolved: Decision = {
      ...decision("resolved"),
      resolution: {
        kind: "chosen",
        optionId: "yes",
        decidedBy: "cat@acme.test",
        decidedAt: "2026-01-01T10:07:00.000Z",
        votes: []
      }
    }
    const withVotes: Decision = {
      ...resolved,
      resolution: { ...resolved.resolution!, votes: resolved.quorum!.votes.filter((v) => v.kind === "chosen") }
    }
    const page = decisionPage({
      decision: withVotes,
      routing: { assigneeCount: 3, unrouted: false },
      canAct: true,
      isAdmin: false,
      roles: []
    })
    assert.include(texts(page.blocks), "Chosen: Ship, by the votes of ann@acme.test, cat@acme.test")
    assert.include(texts(page.blocks), "needed 3 matching votes")
  })

  it("the OpenAPI document describes quorum on create and the quorum with its tally on the decision", () => {
    const schemas = openApiDocument(DecisionsApi).components.schemas as Record<string, any>
    assert.deepStrictEqual(schemas["DecisionCreate"].properties.quorum, { $ref: "#/components/schemas/QuorumCreate" })
    assert.deepStrictEqual(schemas["QuorumCreate"].properties.count.minimum, 1)
    assert.deepStrictEqual(schemas["Decision"].properties.quorum, { $ref: "#/components/schemas/QuorumView" })
    assert.deepStrictEqual(schemas["QuorumView"].properties.tally, { $ref: "#/components/schemas/QuorumTally" })
    assert.deepStrictEqual(schemas["Resolution"].properties.votes.items, { $ref: "#/components/schemas/Vote" })
    assert.deepStrictEqual(schemas["TemplateCreate"].properties.quorum, { $ref: "#/components/schemas/QuorumCreate" })
  })
})
