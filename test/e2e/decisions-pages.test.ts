import { assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { IdempotencyStoreMemory } from "../../adapters/memory/IdempotencyStoreMemory.ts"
import { PageDocument } from "../../core/kernel/PageDocument.ts"
import { sqlBackends } from "../support/Databases.ts"
import { DecisionsMemory } from "../support/DecisionsMemory.ts"
import { decisionsSqlOn } from "../support/DecisionsSql.ts"
import { request, type Answer } from "../support/Http.ts"
import { identityToken, pagesPlane, serveDecisions } from "../support/DecisionsServed.ts"

/** The memory adapters, and the SQL adapters on every SQL backend (PGlite; Postgres when configured). */
const backends = [
  { name: "memory", data: Layer.merge(DecisionsMemory, IdempotencyStoreMemory) },
  ...sqlBackends.map((backend) => ({ name: backend.name, data: decisionsSqlOn(backend) }))
]

let data = backends[0]!.data

const serve = () => serveDecisions(data)

const isPage = Schema.is(PageDocument)

/** A `finance` role held by ada, a caller key, and one decision in the organization. */
const organization = (baseUrl: string, org: string) =>
  Effect.gen(function* () {
    const { act, call } = pagesPlane(baseUrl)
    const admin = yield* identityToken(`admin@${org}.test`, org, "ADMIN")
    const role = yield* act("roles.create", admin, { slug: "finance", name: "Finance", description: "" })
    assert.strictEqual(role.status, 200, role.text)
    assert.deepStrictEqual(role.json, { data: { result: "ok", refresh: true } })
    const assigned = yield* act("role.finance.assign", admin, { memberEmail: `Ada@${org}.test` })
    assert.strictEqual(assigned.status, 200, assigned.text)
    const key = yield* act("keys.create", admin, { name: "billing-agent" })
    assert.strictEqual(key.status, 200, key.text)
    assert.match(key.json.data.secret, /^dcd_/)
    const created = yield* request(`${baseUrl}/api/v1/decisions`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${key.json.data.secret}`,
        "idempotency-key": crypto.randomUUID()
      },
      body: JSON.stringify({
        title: `Refund order 1042 for ${org}?`,
        roleSlug: "finance",
        body: "The customer reports a **damaged** item. <script>alert(1)</script>",
        facts: [{ label: "Amount", value: "€120" }],
        links: [{ label: "Order [1042]", url: "https://shop.example/orders/(1042)" }],
        options: [
          { label: "Refund", consequence: "Money goes back to the card" },
          { label: "Replace", description: "Ship a new one" }
        ],
        urgency: "urgent"
      })
    })
    assert.strictEqual(created.status, 201, created.text)
    void call
    return { admin, key: key.json.data.secret as string, decision: created.json.data.decision }
  })

const code = (answer: Answer) => answer.json?.error?.code

describe.each(backends)("the decisions pages plane ($name adapters, real socket)", (backend) => {
  beforeAll(() => {
    data = backend.data
  })

  it.live(
    "lists pages by role, serves valid documents, and links rows to decision pages",
    () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* serve()
        const org = yield* organization(baseUrl, "acme")
        const { call, page } = pagesPlane(baseUrl)
        const ada = yield* identityToken("ada@acme.test", "acme")

        const memberPages = yield* call("GET", "/api/v1/pages", ada)
        assert.strictEqual(memberPages.status, 200, memberPages.text)
        assert.deepStrictEqual(
          memberPages.json.data.pages.map((p: { id: string }) => p.id),
          ["inbox", "all", "unrouted", "roles", "templates"]
        )
        const adminPages = yield* call("GET", "/api/v1/pages", org.admin)
        assert.includeMembers(
          adminPages.json.data.pages.map((p: { id: string }) => p.id),
          ["keys", "webhooks", "integrations"]
        )

        const inbox = yield* page("inbox", ada)
        assert.strictEqual(inbox.status, 200, inbox.text)
        assert.isTrue(isPage(inbox.json.data.page))
        const table = inbox.json.data.page.blocks.find((b: { type: string }) => b.type === "table")
        assert.strictEqual(table.rows[0].href, `/apps/decisions/decision-${org.decision.id}`)

        const detail = yield* page(`decision-${org.decision.id}`, ada)
        assert.strictEqual(detail.status, 200, detail.text)
        const doc = detail.json.data.page
        assert.isTrue(isPage(doc))
        assert.strictEqual(doc.id, `decision-${org.decision.id}`)
        // The title once: the document's, which the workspace shows as the page's heading.
        assert.strictEqual(doc.title, org.decision.title)
        assert.deepStrictEqual(
          doc.blocks.filter((b: { text?: string }) => b.text === org.decision.title),
          [],
          "no block repeats the title"
        )
        const body = doc.blocks.find((b: { format?: string }) => b.format === "markdown")
        assert.strictEqual(body.text, org.decision.body, "the body is markdown for the renderer to sanitize")
        const links = doc.blocks.filter((b: { format?: string }) => b.format === "markdown")[1]
        assert.strictEqual(links.text, "- [Order \\[1042\\]](https://shop.example/orders/%281042%29)")
        // The options once, as primary buttons; Decline after them, on a row of its own, plain.
        const rows = doc.blocks.filter((b: { type: string }) => b.type === "actionRow")
        assert.deepStrictEqual(
          rows.map((row: { label: string; actions: ReadonlyArray<{ label: string; style: string }> }) => [
            row.label,
            row.actions.map((a) => [a.label, a.style])
          ]),
          [
            [
              "Options",
              [
                ["Refund", "primary"],
                ["Replace", "primary"]
              ]
            ],
            ["Other answers", [["Decline", "default"]]]
          ]
        )
        assert.deepStrictEqual(
          rows[0].actions.map((a: { description?: string }) => a.description),
          ["Money goes back to the card", "Ship a new one"]
        )
        assert.isUndefined(
          doc.blocks.find((b: { type: string }) => b.type === "list"),
          "the options are not listed again beside their buttons"
        )
        assert.isDefined(doc.blocks.find((b: { id?: string }) => b.id === "ask"))
        assert.isDefined(doc.blocks.find((b: { id?: string }) => b.id === "route"))

        // Someone without the role sees the decision but is offered no decision actions.
        const bob = yield* identityToken("bob@acme.test", "acme")
        const asBob = yield* page(`decision-${org.decision.id}`, bob)
        assert.strictEqual(asBob.status, 200)
        assert.isUndefined(asBob.json.data.page.blocks.find((b: { type: string }) => b.type === "actionRow"))
        // They read the options as a list instead.
        const listed = asBob.json.data.page.blocks.find((b: { type: string }) => b.type === "list")
        assert.deepStrictEqual(
          listed.items.map((item: { title: string }) => item.title),
          ["Refund", "Replace"]
        )
        assert.isUndefined(asBob.json.data.page.blocks.find((b: { id?: string }) => b.id === "route"))

        for (const id of ["all", "unrouted", "roles", "templates"]) {
          const other = yield* page(id, ada)
          assert.strictEqual(other.status, 200, other.text)
          assert.isTrue(isPage(other.json.data.page), id)
        }
        for (const id of ["keys", "webhooks", "integrations", "roles", "templates"]) {
          const other = yield* page(id, org.admin)
          assert.strictEqual(other.status, 200, other.text)
          assert.isTrue(isPage(other.json.data.page), id)
        }
        const forbidden = yield* page("keys", ada)
        assert.strictEqual(forbidden.status, 403)
        const unknown = yield* page("nothing-here", ada)
        assert.strictEqual(unknown.status, 404)
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "runs choose once per Idempotency-Key, and refuses a second decision with 409",
    () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* serve()
        const org = yield* organization(baseUrl, "acme")
        const { page, act } = pagesPlane(baseUrl)
        const ada = yield* identityToken("ada@acme.test", "acme")
        const detail = yield* page(`decision-${org.decision.id}`, ada)
        const row = detail.json.data.page.blocks.find((b: { type: string }) => b.type === "actionRow")
        const replace = row.actions[1].actionId as string

        const first = yield* act(replace, ada, {}, "choose-once")
        const second = yield* act(replace, ada, {}, "choose-once")
        assert.strictEqual(first.status, 200, first.text)
        assert.strictEqual(second.status, 200)
        assert.strictEqual(second.text, first.text)
        assert.deepStrictEqual(first.json, { data: { result: "ok", refresh: true } })

        const read = yield* request(`${baseUrl}/api/v1/decisions/${org.decision.id}`, {
          headers: { authorization: `Bearer ${org.key}` }
        })
        assert.strictEqual(read.json.data.decision.resolution.optionId, org.decision.options[1].id)
        assert.strictEqual(read.json.data.decision.resolution.decidedBy, "ada@acme.test")

        const again = yield* act(row.actions[0].actionId, ada, {}, "another-key")
        assert.strictEqual(again.status, 409)
        assert.strictEqual(code(again), "invalid_transition")
        const conflict = yield* act(replace, ada, { rationale: "different body" }, "choose-once")
        assert.strictEqual(code(conflict), "idempotency_conflict")

        const resolved = yield* page(`decision-${org.decision.id}`, ada)
        const callout = resolved.json.data.page.blocks.find((b: { type: string }) => b.type === "callout")
        assert.match(callout.text, /^Chosen: Replace, by ada@acme\.test/)
        assert.isUndefined(resolved.json.data.page.blocks.find((b: { type: string }) => b.type === "actionRow"))
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "runs forms: ask with a question, choose with a rationale, route; refuses bad values naming the field",
    () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* serve()
        const org = yield* organization(baseUrl, "acme")
        const { act, page } = pagesPlane(baseUrl)
        const ada = yield* identityToken("ada@acme.test", "acme")
        const id = org.decision.id as string

        const empty = yield* act(`decision.${id}.ask`, ada, { question: "  " })
        assert.strictEqual(empty.status, 400)
        assert.strictEqual(code(empty), "validation_error")
        assert.strictEqual(empty.json.error.details[0].field, "question")
        const asked = yield* act(`decision.${id}.ask`, ada, { question: "Which carrier?" })
        assert.strictEqual(asked.status, 200, asked.text)
        const waiting = yield* page(`decision-${id}`, ada)
        assert.match(JSON.stringify(waiting.json.data.page), /Waiting for the caller to answer: Which carrier\?/)

        const answered = yield* request(`${baseUrl}/api/v1/decisions/${id}/info-response`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${org.key}` },
          body: JSON.stringify({
            infoRequestId: (yield* request(`${baseUrl}/api/v1/decisions/${id}`, {
              headers: { authorization: `Bearer ${org.key}` }
            })).json.data.decision.infoRequests[0].id,
            answer: "DHL"
          })
        })
        assert.strictEqual(answered.status, 200, answered.text)

        const badRoute = yield* act(`decision.${id}.route`, org.admin, { toEmail: "not an email" })
        assert.strictEqual(badRoute.status, 400)
        assert.strictEqual(badRoute.json.error.details[0].field, "toEmail")
        const routed = yield* act(`decision.${id}.route`, org.admin, { toRole: "", toEmail: "Cy@acme.test", note: "" })
        assert.strictEqual(routed.status, 200, routed.text)

        const missingOption = yield* act(`decision.${id}.choose`, ada, { rationale: "no option" })
        assert.strictEqual(missingOption.status, 400)
        const chosen = yield* act(`decision.${id}.choose`, ada, {
          optionId: org.decision.options[0].id,
          rationale: "Card refund is fastest"
        })
        assert.strictEqual(chosen.status, 200, chosen.text)
        const done = yield* page(`decision-${id}`, ada)
        assert.match(JSON.stringify(done.json.data.page), /Rationale: Card refund is fastest/)
        assert.match(JSON.stringify(done.json.data.page), /Assigned to cy@acme\.test/)

        const noSuch = yield* act("decision.nope.dance", ada)
        assert.strictEqual(noSuch.status, 404)
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "keeps organizations apart: another organization's decision is the same 404 as a missing one",
    () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* serve()
        const acme = yield* organization(baseUrl, "acme")
        const globex = yield* organization(baseUrl, "globex")
        const { page, act, call } = pagesPlane(baseUrl)
        const ada = yield* identityToken("ada@acme.test", "acme")

        const foreign = yield* page(`decision-${globex.decision.id}`, ada)
        const missing = yield* page("decision-01ARZ3NDEKTSV4RRFFQ69G5FAV", ada)
        assert.strictEqual(foreign.status, 404)
        assert.strictEqual(foreign.text, missing.text)

        const foreignAct = yield* act(`decision.${globex.decision.id}.decline`, ada)
        const missingAct = yield* act("decision.01ARZ3NDEKTSV4RRFFQ69G5FAV.decline", ada)
        assert.strictEqual(foreignAct.status, 404)
        assert.strictEqual(foreignAct.text, missingAct.text)

        const all = yield* page("all", ada)
        assert.notInclude(all.text, globex.decision.id)
        assert.include(all.text, acme.decision.id)
        const search = yield* call("GET", "/api/v1/search?q=refund", ada)
        assert.strictEqual(search.status, 200, search.text)
        assert.deepStrictEqual(
          search.json.data.hits.map((h: { id: string }) => h.id),
          [acme.decision.id]
        )
        // A forgeable ?email= is no identity: the token decides who asks.
        const spoof = yield* call("GET", "/api/v1/pages/all?email=ada@globex.test", ada)
        assert.strictEqual(spoof.status, 200)
        assert.notInclude(spoof.text, globex.decision.id)
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "refuses a wrong service key, a wrong audience and a missing token with 401",
    () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* serve()
        const ada = yield* identityToken("ada@acme.test", "acme")
        const wrongAudience = yield* identityToken("ada@acme.test", "acme", "MEMBER", { audience: "tasks" })
        const { call } = pagesPlane(baseUrl)
        for (const path of ["/api/v1/pages", "/api/v1/pages/inbox", "/api/v1/summary", "/api/v1/activity"]) {
          const wrongKey = yield* request(`${baseUrl}${path}`, {
            headers: { "x-decisions-api-key": "wrong-key-wrong-key", "x-workspace-token": ada }
          })
          assert.strictEqual(wrongKey.status, 401, path)
          assert.strictEqual((yield* call("GET", path, wrongAudience)).status, 401, path)
          assert.strictEqual((yield* call("GET", path, undefined)).status, 401, path)
        }
        const action = yield* request(`${baseUrl}/api/v1/actions/keys.create`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-workspace-token": ada },
          body: JSON.stringify({ name: "x" })
        })
        assert.strictEqual(action.status, 401)
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "shows a new caller key once, in the action's answer; summary and activity are the person's",
    () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* serve()
        const org = yield* organization(baseUrl, "acme")
        const { page, act, call } = pagesPlane(baseUrl)
        const keys = yield* page("keys", org.admin)
        assert.notInclude(keys.text, org.key)
        assert.include(keys.text, org.key.slice(0, 8))
        const row = keys.json.data.page.blocks.find((b: { type: string }) => b.type === "actionRow")
        const rotate = row.actions.find((a: { label: string }) => a.label === "Rotate billing-agent")
        const rotated = yield* act(rotate.actionId, org.admin)
        assert.strictEqual(rotated.status, 200, rotated.text)
        assert.match(rotated.json.data.secret, /^dcd_/)
        assert.notStrictEqual(rotated.json.data.secret, org.key)
        const ada = yield* identityToken("ada@acme.test", "acme")
        const notAdmin = yield* act("keys.create", ada, { name: "sneaky" })
        assert.strictEqual(notAdmin.status, 403)

        const summary = yield* call("GET", "/api/v1/summary", ada)
        assert.strictEqual(summary.status, 200, summary.text)
        assert.deepStrictEqual(summary.json.data.stats, [
          { label: "Waiting for you", value: "1" },
          { label: "Urgent", value: "1" },
          { label: "Unrouted", value: "0" }
        ])
        const bob = yield* identityToken("bob@acme.test", "acme")
        assert.strictEqual((yield* call("GET", "/api/v1/summary", bob)).json.data.stats[0].value, "0")
        const activity = yield* call("GET", "/api/v1/activity", ada)
        assert.deepStrictEqual(
          activity.json.data.items.map((i: { href: string }) => i.href),
          [`/apps/decisions/decision-${org.decision.id}`]
        )
        assert.strictEqual((yield* call("GET", "/api/v1/search?q=a", ada)).status, 400)

        const hook = yield* request(`${baseUrl}/api/v1/webhooks`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${rotated.json.data.secret}` },
          body: JSON.stringify({ url: "http://127.0.0.1:9/hook" })
        })
        assert.strictEqual(hook.status, 201, hook.text)
        const declined = yield* act(`decision.${org.decision.id}.decline`, ada, { rationale: "Out of policy" })
        assert.strictEqual(declined.status, 200, declined.text)
        const webhooks = yield* page("webhooks", org.admin)
        assert.isTrue(isPage(webhooks.json.data.page))
        assert.include(webhooks.text, "http://127.0.0.1:9/hook")
        assert.include(webhooks.text, "decision.resolved")
        assert.notInclude(webhooks.text, hook.json.data.secret)
        const disable = webhooks.json.data.page.blocks.find((b: { type: string }) => b.type === "actionRow").actions[0]
        assert.strictEqual((yield* act(disable.actionId, org.admin)).status, 200)
        assert.include((yield* page("webhooks", org.admin)).text, "(disabled)")

        const setToken = yield* act("recordStore.set", org.admin, { token: "pat-secret-token" })
        assert.strictEqual(setToken.status, 200, setToken.text)
        const integrations = yield* page("integrations", org.admin)
        assert.include(integrations.text, "Connected by admin@acme.test")
        assert.notInclude(integrations.text, "pat-secret-token")
        assert.strictEqual((yield* act("recordStore.unset", org.admin)).status, 200)
        assert.include((yield* page("integrations", org.admin)).text, "Not connected")
      }).pipe(Effect.scoped),
    120_000
  )
})
