import { assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { IdempotencyStoreMemory } from "../../adapters/memory/IdempotencyStoreMemory.ts"
import { PageDocument } from "../../core/kernel/PageDocument.ts"
import { sqlBackends } from "../support/Databases.ts"
import { DecisionsMemory } from "../support/DecisionsMemory.ts"
import { decisionsSqlOn } from "../support/DecisionsSql.ts"
import { request } from "../support/Http.ts"
import {
  decisionsClient,
  financeOrganization,
  identityToken,
  pagesPlane,
  serveDecisions
} from "../support/DecisionsServed.ts"

/** The memory adapters, and the SQL adapters on every SQL backend (PGlite; Postgres when configured). */
const backends = [
  { name: "memory", data: Layer.merge(DecisionsMemory, IdempotencyStoreMemory) },
  ...sqlBackends.map((backend) => ({ name: backend.name, data: decisionsSqlOn(backend) }))
]
let data = backends[0]!.data

type Day = { day: string; created: number; resolved: number; expired: number; escalated: number }
const total = (days: ReadonlyArray<Day>, key: keyof Omit<Day, "day">) => days.reduce((n, day) => n + day[key], 0)
const today = () => new Date().toISOString().slice(0, 10)

/**
 * An organization with a `refund` template on the finance role: two decisions raised from it and two created
 * directly, one of each chosen by ada, and one more that expires a second after it is created.
 */
const flowingOrganization = (baseUrl: string, org: string) =>
  Effect.gen(function* () {
    const setup = yield* financeOrganization(baseUrl, org)
    const { workspace, caller } = decisionsClient(baseUrl)
    const template = yield* workspace("POST", "/api/v1/workspace/templates", setup.admin, {
      slug: "refund",
      name: "Refund",
      roleSlug: "finance",
      titleTemplate: "Refund order {{order}}?",
      options: [{ label: "Refund" }, { label: "Keep" }]
    })
    assert.strictEqual(template.status, 201, template.text)
    const post = (path: string, body: unknown) =>
      Effect.map(caller("POST", path, setup.key, body, { "idempotency-key": crypto.randomUUID() }), (answer) => {
        assert.strictEqual(answer.status, 201, answer.text)
        return answer.json.data.decision as { id: string; options: ReadonlyArray<{ id: string }> }
      })
    const direct = (title: string, extra: object = {}) =>
      post("/api/v1/decisions", { title, roleSlug: "finance", options: [{ label: "Yes" }, { label: "No" }], ...extra })
    const raised = (order: string) => post("/api/v1/templates/refund/raise", { params: { order } })

    const raisedChosen = yield* raised("1")
    const directChosen = yield* direct("Chosen directly")
    const raisedWaiting = yield* raised("2")
    const directWaiting = yield* direct("Waiting directly")
    yield* direct("Expiring", { expiresAt: new Date(Date.now() + 1000).toISOString() })
    for (const decision of [raisedChosen, directChosen]) {
      const chosen = yield* workspace("POST", `/api/v1/workspace/decisions/${decision.id}/choose`, setup.ada, {
        optionId: decision.options[0]!.id
      })
      assert.strictEqual(chosen.status, 200, chosen.text)
    }
    yield* Effect.sleep("1200 millis")
    return { ...setup, waiting: [raisedWaiting.id, directWaiting.id] }
  })

describe.each(backends)("the flow of decisions ($name adapters, real socket)", (backend) => {
  beforeAll(() => {
    data = backend.data
  })

  it.live(
    "answers admins the flow of their organization only, as JSON, and refuses others",
    () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* serveDecisions(data)
        const org = yield* flowingOrganization(baseUrl, "acme")
        const { workspace } = decisionsClient(baseUrl)

        const answer = yield* workspace("GET", "/api/v1/workspace/flow", org.admin)
        assert.strictEqual(answer.status, 200, answer.text)
        const flow = answer.json.data
        assert.strictEqual(flow.window.days, 30)
        assert.strictEqual(flow.perDay.length, 30)
        assert.strictEqual(flow.window.to, flow.perDay.at(-1).day)
        assert.strictEqual(flow.window.from, flow.perDay[0].day)
        assert.include([today(), new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)], flow.window.to)
        assert.deepStrictEqual(
          ["created", "resolved", "expired", "escalated"].map((key) =>
            total(flow.perDay, key as keyof Omit<Day, "day">)
          ),
          [5, 2, 1, 0]
        )
        assert.deepStrictEqual(
          flow.timeToDecide.byRole.map((row: { roleSlug: string; decided: number }) => [row.roleSlug, row.decided]),
          [["finance", 2]]
        )
        const [finance] = flow.timeToDecide.byRole
        assert.isAtLeast(finance.medianSeconds, 0)
        assert.isAtLeast(finance.p90Seconds, finance.medianSeconds)
        assert.deepStrictEqual(
          flow.timeToDecide.byTemplate.map((row: { templateSlug: string; decided: number }) => [
            row.templateSlug,
            row.decided
          ]),
          [["refund", 1]]
        )
        assert.deepStrictEqual(
          flow.oldestWaiting.map((d: { id: string }) => d.id),
          org.waiting
        )
        assert.deepStrictEqual(
          flow.oldestWaiting.map((d: { title: string; status: string; roleSlug: string }) => [
            d.title,
            d.status,
            d.roleSlug
          ]),
          [
            ["Refund order 2?", "pending", "finance"],
            ["Waiting directly", "pending", "finance"]
          ]
        )
        for (const waiting of flow.oldestWaiting) assert.isTrue(Number.isInteger(waiting.waitingSeconds))

        const week = yield* workspace("GET", "/api/v1/workspace/flow?days=7", org.admin)
        assert.strictEqual(week.status, 200, week.text)
        assert.strictEqual(week.json.data.window.days, 7)
        assert.strictEqual(week.json.data.perDay.length, 7)
        for (const bad of ["0", "366", "abc", "7.5"]) {
          const refused = yield* workspace("GET", `/api/v1/workspace/flow?days=${bad}`, org.admin)
          assert.strictEqual(refused.status, 400, `days=${bad}: ${refused.text}`)
          assert.strictEqual(refused.json.error.code, "validation_error")
        }

        const byMember = yield* workspace("GET", "/api/v1/workspace/flow", org.ada)
        assert.strictEqual(byMember.status, 403, byMember.text)
        const signedOut = yield* workspace("GET", "/api/v1/workspace/flow", undefined)
        assert.strictEqual(signedOut.status, 401)

        // Another organization's admin sees none of acme's decisions.
        const otherAdmin = yield* identityToken("admin@globex.test", "globex", "OWNER")
        const other = yield* workspace("GET", "/api/v1/workspace/flow", otherAdmin)
        assert.strictEqual(other.status, 200, other.text)
        assert.deepStrictEqual(
          ["created", "resolved", "expired", "escalated"].map((key) =>
            total(other.json.data.perDay, key as keyof Omit<Day, "day">)
          ),
          [0, 0, 0, 0]
        )
        assert.deepStrictEqual(other.json.data.timeToDecide, { byRole: [], byTemplate: [] })
        assert.deepStrictEqual(other.json.data.oldestWaiting, [])

        const openapi = yield* request(`${baseUrl}/api/v1/openapi`)
        assert.strictEqual(openapi.status, 200)
        const documented = openapi.json.paths["/api/v1/workspace/flow"]?.get
        assert.isDefined(documented, "the route is in the OpenAPI document")
        assert.deepStrictEqual(
          documented.parameters.filter((p: { in: string }) => p.in === "query").map((p: { name: string }) => p.name),
          ["days"]
        )
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "serves the flow page to admins with its charts' numbers, in windows of 30 days or another",
    () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* serveDecisions(data)
        const org = yield* flowingOrganization(baseUrl, "initech")
        const { call, page } = pagesPlane(baseUrl)

        const adminPages = yield* call("GET", "/api/v1/pages", org.admin)
        assert.include(
          adminPages.json.data.pages.map((p: { id: string }) => p.id),
          "flow"
        )
        const memberPages = yield* call("GET", "/api/v1/pages", org.ada)
        assert.notInclude(
          memberPages.json.data.pages.map((p: { id: string }) => p.id),
          "flow"
        )

        const shown = yield* page("flow", org.admin)
        assert.strictEqual(shown.status, 200, shown.text)
        const doc = shown.json.data.page
        assert.isTrue(Schema.is(PageDocument)(doc), "a valid page document")
        const charts = doc.blocks.filter((b: { type: string }) => b.type === "chart")
        assert.deepStrictEqual(
          charts.map((c: { title: string; kind: string }) => [c.title, c.kind]),
          [
            ["Decisions per day", "line"],
            ["Time to decide by role", "bar"],
            ["Time to decide by template", "bar"]
          ]
        )
        const [perDay, byRole, byTemplate] = charts
        assert.strictEqual(perDay.labels.length, 30)
        assert.deepStrictEqual(
          perDay.series.map((s: { label: string; values: ReadonlyArray<number> }) => [
            s.label,
            s.values.reduce((a, b) => a + b, 0)
          ]),
          [
            ["Created", 5],
            ["Resolved", 2],
            ["Expired", 1],
            ["Escalated", 0]
          ]
        )
        assert.deepStrictEqual(byRole.labels, ["finance"])
        assert.deepStrictEqual(byTemplate.labels, ["refund"])
        assert.deepStrictEqual(
          byRole.series.map((s: { label: string }) => s.label),
          ["Median", "90th percentile"]
        )
        const waiting = doc.blocks.find((b: { type: string }) => b.type === "table")
        assert.deepStrictEqual(
          waiting.rows.map((row: { href: string }) => row.href),
          org.waiting.map((id) => `/apps/decisions/decision-${id}`)
        )

        const week = yield* page("flow-7", org.admin)
        assert.strictEqual(week.status, 200, week.text)
        assert.strictEqual(week.json.data.page.id, "flow-7")
        assert.strictEqual(
          week.json.data.page.blocks.find((b: { type: string }) => b.type === "chart").labels.length,
          7
        )
        assert.strictEqual((yield* page("flow", org.ada)).status, 403)
        for (const id of ["flow-0", "flow-030", "flow-30", "flow-366", "flows"]) {
          assert.strictEqual((yield* page(id, org.admin)).status, 404, id)
        }
      }).pipe(Effect.scoped),
    120_000
  )
})
