import { assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { IdempotencyStoreMemory } from "../../adapters/memory/IdempotencyStoreMemory.ts"
import { type ServiceSettings } from "../../apps/server/Services.ts"
import { pglite } from "../support/Databases.ts"
import { DecisionsMemory } from "../support/DecisionsMemory.ts"
import { decisionsSqlOn } from "../support/DecisionsSql.ts"
import { request, type Answer } from "../support/Http.ts"
import { decisionsClient, financeOrganization, identityToken, serveDecisions } from "../support/DecisionsServed.ts"

/** Every test runs on the memory adapters and on the SQL adapters (embedded PGlite, fresh per test). */
const backends = [
  { name: "memory", data: Layer.merge(DecisionsMemory, IdempotencyStoreMemory) },
  { name: "sql", data: decisionsSqlOn(pglite) }
]

let data = backends[0]!.data

const serve = (overrides: Partial<ServiceSettings> = {}) => serveDecisions(data, { settings: overrides })

const decisionBody = {
  title: "Refund order 1042?",
  roleSlug: "finance",
  body: "The customer reports a **damaged** item.",
  facts: [{ label: "Amount", value: "€120" }],
  links: [{ label: "Order", url: "https://shop.example/orders/1042" }],
  options: [{ label: "Refund" }, { label: "Replace", description: "Ship a new one" }],
  urgency: "urgent"
}

const create = (
  baseUrl: string,
  key: string,
  body: unknown = decisionBody,
  idempotencyKey: string = crypto.randomUUID()
) => decisionsClient(baseUrl).caller("POST", "/api/v1/decisions", key, body, { "idempotency-key": idempotencyKey })

const code = (answer: Answer) => answer.json?.error?.code

describe.each(backends)("decisions over HTTP (both planes, real socket, $name adapters)", (backend) => {
  beforeAll(() => {
    data = backend.data
  })

  it.live("walks a decision from a caller to a role holder and back to a long-polling caller", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serve()
      const org = yield* financeOrganization(baseUrl, "acme")
      const { caller, workspace } = decisionsClient(baseUrl)

      const created = yield* create(baseUrl, org.key)
      assert.strictEqual(created.status, 201, created.text)
      const decision = created.json.data.decision
      assert.strictEqual(decision.status, "pending")
      assert.strictEqual(decision.callerName, "billing-agent")
      assert.deepStrictEqual(decision.routing, { assigneeCount: 1, unrouted: false })
      assert.isUndefined(decision.version)

      const waiting = yield* Effect.forkChild(caller("GET", `/api/v1/decisions/${decision.id}?wait=30`, org.key))
      yield* Effect.sleep("100 millis")

      const ada = yield* identityToken("ada@acme.test", "acme")
      const inbox = yield* workspace("GET", "/api/v1/workspace/decisions?scope=inbox", ada)
      assert.strictEqual(inbox.status, 200, inbox.text)
      assert.deepStrictEqual(
        inbox.json.data.decisions.map((d: { id: string }) => d.id),
        [decision.id]
      )
      assert.isUndefined(inbox.json.data.decisions[0].routing)

      const startedAt = Date.now()
      const chosen = yield* workspace("POST", `/api/v1/workspace/decisions/${decision.id}/choose`, ada, {
        optionId: decision.options[1].id,
        rationale: "Replacement is cheaper"
      })
      assert.strictEqual(chosen.status, 200, chosen.text)
      assert.strictEqual(chosen.json.data.decision.resolution.kind, "chosen")
      assert.strictEqual(chosen.json.data.decision.resolution.decidedBy, "ada@acme.test")

      const woke = yield* Fiber.join(waiting)
      assert.strictEqual(woke.status, 200)
      assert.strictEqual(woke.json.data.decision.status, "resolved")
      assert.isBelow(Date.now() - startedAt, 1000, "the waiting caller is woken by the change, not by its timeout")

      const again = yield* workspace("POST", `/api/v1/workspace/decisions/${decision.id}/decline`, ada, {})
      assert.strictEqual(again.status, 409)
      assert.strictEqual(code(again), "invalid_transition")
    }).pipe(Effect.scoped)
  )

  it.live("answers the address of the decision's page in the workspace on create and get, to hand a person", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serve({ workspaceUrl: "https://work.example.com/" })
      const org = yield* financeOrganization(baseUrl, "acme")
      const { caller, workspace } = decisionsClient(baseUrl)
      const created = yield* create(baseUrl, org.key)
      assert.strictEqual(created.status, 201, created.text)
      const id = created.json.data.decision.id as string
      const url = `https://work.example.com/apps/decisions/decision-${id}`
      assert.strictEqual(created.json.data.decision.url, url)
      const read = yield* caller("GET", `/api/v1/decisions/${id}`, org.key)
      assert.strictEqual(read.json.data.decision.url, url)
      const seen = yield* workspace("GET", `/api/v1/workspace/decisions/${id}`, org.ada)
      assert.strictEqual(seen.json.data.decision.url, url)

      // A service that does not know the workspace's address answers none.
      const alone = yield* serve()
      const other = yield* financeOrganization(alone.baseUrl, "acme")
      const plain = yield* create(alone.baseUrl, other.key)
      assert.isUndefined(plain.json.data.decision.url)
    })
  )

  it.live("honours Idempotency-Key on create: required, replayed byte for byte, conflict on a different body", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serve()
      const org = yield* financeOrganization(baseUrl, "acme")
      const missing = yield* decisionsClient(baseUrl).caller("POST", "/api/v1/decisions", org.key, decisionBody)
      assert.strictEqual(missing.status, 400)
      assert.strictEqual(code(missing), "validation_error")

      const first = yield* create(baseUrl, org.key, decisionBody, "key-1")
      const replay = yield* create(baseUrl, org.key, decisionBody, "key-1")
      assert.strictEqual(replay.status, 201)
      assert.strictEqual(replay.text, first.text)
      const other = yield* create(baseUrl, org.key, { ...decisionBody, title: "Another" }, "key-1")
      assert.strictEqual(other.status, 409)
      assert.strictEqual(code(other), "idempotency_conflict")
      const list = yield* decisionsClient(baseUrl).caller("GET", "/api/v1/decisions", org.key)
      assert.strictEqual(list.json.data.decisions.length, 1)
    }).pipe(Effect.scoped)
  )

  it.live("answers bad input with the documented codes", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serve()
      const org = yield* financeOrganization(baseUrl, "acme")
      const unknownRole = yield* create(baseUrl, org.key, { ...decisionBody, roleSlug: "legal" })
      assert.strictEqual(unknownRole.status, 400)
      assert.strictEqual(code(unknownRole), "unknown_role")
      assert.deepStrictEqual(unknownRole.json.error.details.validRoles, ["finance"])

      const invalid = yield* create(baseUrl, org.key, { ...decisionBody, title: "", options: [{ label: "Only" }] })
      assert.strictEqual(invalid.status, 400)
      assert.strictEqual(code(invalid), "validation_error")
      const fields = invalid.json.error.details.map((d: { field: string }) => d.field).sort()
      assert.deepStrictEqual(fields, ["options", "title"])

      const tooLong = yield* create(baseUrl, org.key, { ...decisionBody, body: "x".repeat(32769) })
      assert.strictEqual(tooLong.status, 413)

      const defaultWithoutExpiry = yield* create(baseUrl, org.key, {
        ...decisionBody,
        options: [{ label: "A", default: true }, { label: "B" }]
      })
      assert.strictEqual(code(defaultWithoutExpiry), "validation_error")

      const httpLink = yield* create(baseUrl, org.key, {
        ...decisionBody,
        links: [{ label: "x", url: "http://a.example" }]
      })
      assert.strictEqual(code(httpLink), "validation_error")

      const badJson = yield* request(`${baseUrl}/api/v1/decisions`, {
        method: "POST",
        headers: { authorization: `Bearer ${org.key}`, "content-type": "application/json", "idempotency-key": "k" },
        body: "{oops"
      })
      assert.strictEqual(badJson.status, 400)
      assert.strictEqual(code(badJson), "INVALID_JSON")

      const badLimit = yield* decisionsClient(baseUrl).caller("GET", "/api/v1/decisions?limit=0", org.key)
      assert.strictEqual(code(badLimit), "validation_error")
    }).pipe(Effect.scoped)
  )

  it.live("refuses missing, wrong, revoked and rotated-out credentials with 401", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serve()
      const org = yield* financeOrganization(baseUrl, "acme")
      const { caller, workspace } = decisionsClient(baseUrl)
      const none = yield* request(`${baseUrl}/api/v1/decisions`)
      assert.strictEqual(none.status, 401)
      assert.strictEqual(code(none), "UNAUTHORIZED")
      assert.strictEqual((yield* caller("GET", "/api/v1/decisions", "dcd_wrong")).status, 401)

      const rotated = yield* workspace("POST", `/api/v1/workspace/keys/${org.keyId}/rotate`, org.admin)
      assert.strictEqual(rotated.status, 200, rotated.text)
      assert.strictEqual((yield* caller("GET", "/api/v1/decisions", org.key)).status, 401)
      const fresh = rotated.json.data.plaintext as string
      assert.strictEqual((yield* caller("GET", "/api/v1/decisions", fresh)).status, 200)

      const revoked = yield* workspace("POST", `/api/v1/workspace/keys/${org.keyId}/revoke`, org.admin)
      assert.isDefined(revoked.json.data.key.revokedAt)
      assert.strictEqual((yield* caller("GET", "/api/v1/decisions", fresh)).status, 401)

      const keys = yield* workspace("GET", "/api/v1/workspace/keys", org.admin)
      assert.notInclude(keys.text, fresh)
      assert.notInclude(keys.text, "hash")

      const ada = yield* identityToken("ada@acme.test", "acme")
      const noServiceKey = yield* request(`${baseUrl}/api/v1/workspace/decisions`, {
        headers: { "x-workspace-token": ada }
      })
      assert.strictEqual(noServiceKey.status, 401)
      const wrongServiceKey = yield* workspace("GET", "/api/v1/workspace/decisions", ada, undefined, {
        "x-decisions-api-key": "nope"
      })
      assert.strictEqual(wrongServiceKey.status, 401)
      const wrongAudience = yield* workspace(
        "GET",
        "/api/v1/workspace/decisions",
        yield* identityToken("ada@acme.test", "acme", "MEMBER", { audience: "tasks" })
      )
      assert.strictEqual(wrongAudience.status, 401)
      const wrongKey = yield* workspace(
        "GET",
        "/api/v1/workspace/decisions",
        yield* identityToken("ada@acme.test", "acme", "MEMBER", { key: "forged-key" })
      )
      assert.strictEqual(wrongKey.status, 401)
      assert.strictEqual(wrongKey.text, noServiceKey.text)
    }).pipe(Effect.scoped)
  )

  it.live("keeps organizations apart and lets only holders act", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serve()
      const acme = yield* financeOrganization(baseUrl, "acme")
      const globex = yield* financeOrganization(baseUrl, "globex")
      const { caller, workspace } = decisionsClient(baseUrl)
      const decision = (yield* create(baseUrl, acme.key)).json.data.decision

      const foreign = yield* caller("GET", `/api/v1/decisions/${decision.id}`, globex.key)
      const missing = yield* caller("GET", "/api/v1/decisions/01ARZ3NDEKTSV4RRFFQ69G5FAV", globex.key)
      assert.strictEqual(foreign.status, 404)
      assert.strictEqual(foreign.text, missing.text)

      const globexAda = yield* identityToken("ada@globex.test", "globex")
      const foreignChoose = yield* workspace("POST", `/api/v1/workspace/decisions/${decision.id}/choose`, globexAda, {
        optionId: decision.options[0].id
      })
      assert.strictEqual(foreignChoose.status, 404)

      const bob = yield* identityToken("bob@acme.test", "acme")
      const notHolder = yield* workspace("POST", `/api/v1/workspace/decisions/${decision.id}/choose`, bob, {
        optionId: decision.options[0].id
      })
      assert.strictEqual(notHolder.status, 403)
      assert.strictEqual(code(notHolder), "FORBIDDEN")

      const memberCreatesRole = yield* workspace("POST", "/api/v1/workspace/roles", bob, { slug: "x", name: "X" })
      assert.strictEqual(memberCreatesRole.status, 403)
      const still = yield* caller("GET", `/api/v1/decisions/${decision.id}`, acme.key)
      assert.strictEqual(still.json.data.decision.status, "pending")
    }).pipe(Effect.scoped)
  )

  it.live("asks for information, takes the caller's answer, routes, and cancels", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serve()
      const org = yield* financeOrganization(baseUrl, "acme")
      const { caller, workspace } = decisionsClient(baseUrl)
      const decision = (yield* create(baseUrl, org.key)).json.data.decision
      const ada = yield* identityToken("ada@acme.test", "acme")

      const asked = yield* workspace("POST", `/api/v1/workspace/decisions/${decision.id}/info-requests`, ada, {
        question: "Which warehouse shipped it?"
      })
      assert.strictEqual(asked.json.data.decision.status, "needs_info")
      const request = asked.json.data.decision.infoRequests[0]
      assert.strictEqual(request.askedBy, "ada@acme.test")

      const answered = yield* caller("POST", `/api/v1/decisions/${decision.id}/info-response`, org.key, {
        infoRequestId: request.id,
        answer: "Rotterdam"
      })
      assert.strictEqual(answered.status, 200, answered.text)
      assert.strictEqual(answered.json.data.decision.status, "pending")
      assert.strictEqual(answered.json.data.decision.infoRequests[0].answer, "Rotterdam")

      const routed = yield* workspace("POST", `/api/v1/workspace/decisions/${decision.id}/route`, org.admin, {
        toEmail: "lin@acme.test",
        note: "Lin owns refunds this week"
      })
      assert.strictEqual(routed.status, 200, routed.text)
      assert.strictEqual(routed.json.data.decision.directAssigneeEmail, "lin@acme.test")
      assert.strictEqual(routed.json.data.decision.routing.assigneeCount, 2)
      assert.strictEqual(routed.json.data.decision.assignmentHistory.length, 1)

      const cancelled = yield* caller("POST", `/api/v1/decisions/${decision.id}/cancel`, org.key)
      assert.strictEqual(cancelled.json.data.decision.status, "cancelled")
      const cancelledAgain = yield* caller("POST", `/api/v1/decisions/${decision.id}/cancel`, org.key)
      assert.strictEqual(code(cancelledAgain), "invalid_transition")
    }).pipe(Effect.scoped)
  )

  it.live("shows unrouted decisions with the reason, and expiry without any scheduler", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serve()
      const org = yield* financeOrganization(baseUrl, "acme")
      const { caller, workspace } = decisionsClient(baseUrl)
      yield* workspace("POST", "/api/v1/workspace/roles", org.admin, { slug: "legal", name: "Legal" })
      const unrouted = (yield* create(baseUrl, org.key, { ...decisionBody, roleSlug: "legal" })).json.data.decision
      assert.deepStrictEqual(unrouted.routing, { assigneeCount: 0, unrouted: true, reason: "no_members" })
      const list = yield* workspace("GET", "/api/v1/workspace/decisions?scope=unrouted", org.admin)
      assert.deepStrictEqual(
        list.json.data.decisions.map((d: { id: string; routing: { reason: string } }) => [d.id, d.routing.reason]),
        [[unrouted.id, "no_members"]]
      )
      yield* workspace("POST", "/api/v1/workspace/roles/legal/archive", org.admin)
      const archived = yield* caller("GET", `/api/v1/decisions/${unrouted.id}`, org.key)
      assert.strictEqual(archived.json.data.decision.routing.reason, "role_archived")

      const expiresAt = new Date(Date.now() + 1500).toISOString()
      const expiring = (yield* create(baseUrl, org.key, {
        ...decisionBody,
        expiresAt,
        options: [{ label: "Refund", default: true }, { label: "Replace" }]
      })).json.data.decision
      const waited = yield* caller("GET", `/api/v1/decisions/${expiring.id}?wait=10`, org.key)
      assert.strictEqual(waited.json.data.decision.status, "expired")
      assert.strictEqual(waited.json.data.decision.resolution.kind, "expired_default")
      assert.strictEqual(waited.json.data.decision.resolution.decidedBy, "system:expiry")
      const expiredList = yield* caller("GET", "/api/v1/decisions?status=expired", org.key)
      assert.deepStrictEqual(
        expiredList.json.data.decisions.map((d: { id: string }) => d.id),
        [expiring.id]
      )
    }).pipe(Effect.scoped)
  )

  it.live("pages lists with cursor and limit", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serve()
      const org = yield* financeOrganization(baseUrl, "acme")
      const ids: Array<string> = []
      for (let i = 0; i < 5; i++) ids.push((yield* create(baseUrl, org.key)).json.data.decision.id)
      const seen: Array<string> = []
      let cursor: string | undefined
      do {
        const page = yield* decisionsClient(baseUrl).caller(
          "GET",
          `/api/v1/decisions?limit=2${cursor ? `&cursor=${cursor}` : ""}`,
          org.key
        )
        seen.push(...page.json.data.decisions.map((d: { id: string }) => d.id))
        cursor = page.json.data.nextCursor
      } while (cursor !== undefined)
      assert.deepStrictEqual(seen, [...ids].reverse())
      // A cursor no page gave is refused, never read as the end of the list.
      for (const bad of ["!!!", "abc", ids[0]!.toLowerCase()]) {
        const refused = yield* decisionsClient(baseUrl).caller("GET", `/api/v1/decisions?cursor=${bad}`, org.key)
        assert.strictEqual(refused.status, 400, bad)
        assert.strictEqual(code(refused), "validation_error")
      }
    }).pipe(Effect.scoped)
  )

  it.live("rate limits per caller key with 429 and Retry-After", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serve({ decisionsCallerRequestsPerMinute: 3 })
      const org = yield* financeOrganization(baseUrl, "acme")
      const answers: Array<Answer> = []
      for (let i = 0; i < 4; i++)
        answers.push(yield* decisionsClient(baseUrl).caller("GET", "/api/v1/decisions", org.key))
      assert.deepStrictEqual(
        answers.map((a) => a.status),
        [200, 200, 200, 429]
      )
      assert.strictEqual(code(answers[3]!), "RATE_LIMITED")
      assert.isAtLeast(Number(answers[3]!.headers.get("retry-after")), 1)
    }).pipe(Effect.scoped)
  )

  it.live("keeps templates (admins) and raises them on both planes into decisions", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serve()
      const org = yield* financeOrganization(baseUrl, "acme")
      const { caller, workspace } = decisionsClient(baseUrl)
      const ada = yield* identityToken("ada@acme.test", "acme")
      const definition = {
        slug: "refund",
        name: "Refund request",
        roleSlug: "finance",
        titleTemplate: "Refund order {{order}}?",
        bodyTemplate: "Customer {{customer}} asks for a refund.",
        options: [
          {
            label: "Refund",
            action: {
              type: "record_update",
              baseId: "appAAAAAAAAAAAAAA",
              tableId: "tblBBBBBBBBBBBBBB",
              fields: { Status: "Refunded by {{resolvedBy}}" }
            }
          },
          { label: "Keep" }
        ]
      }
      const byMember = yield* workspace("POST", "/api/v1/workspace/templates", ada, definition)
      assert.strictEqual(byMember.status, 403)
      const created = yield* workspace("POST", "/api/v1/workspace/templates", org.admin, definition)
      assert.strictEqual(created.status, 201, created.text)
      const template = created.json.data.template
      assert.deepStrictEqual(
        template.options.map((o: { position: number }) => o.position),
        [0, 1]
      )
      const unknownRole = yield* workspace("POST", "/api/v1/workspace/templates", org.admin, {
        ...definition,
        slug: "x",
        roleSlug: "legal"
      })
      assert.strictEqual(code(unknownRole), "unknown_role")
      const badBase = yield* workspace("POST", "/api/v1/workspace/templates", org.admin, {
        ...definition,
        slug: "y",
        options: [{ label: "A", action: { ...definition.options[0]!.action, baseId: "nope" } }, { label: "B" }]
      })
      assert.strictEqual(code(badBase), "validation_error")

      const raised = yield* caller(
        "POST",
        "/api/v1/templates/refund/raise",
        org.key,
        {
          params: { order: "1042", customer: "Ada", recordId: "recAAAAAAAAAAAAAA" }
        },
        { "idempotency-key": "raise-1" }
      )
      assert.strictEqual(raised.status, 201, raised.text)
      const decision = raised.json.data.decision
      assert.strictEqual(decision.title, "Refund order 1042?")
      assert.strictEqual(decision.body, "Customer Ada asks for a refund.")
      assert.deepStrictEqual(
        decision.facts.map((f: { label: string }) => f.label),
        ["order", "customer", "recordId"]
      )
      assert.deepStrictEqual(
        decision.options.map((o: { id: string }) => o.id),
        template.options.map((o: { id: string }) => o.id)
      )
      assert.strictEqual(decision.routing.assigneeCount, 1)

      const noKey = yield* caller("POST", "/api/v1/templates/refund/raise", org.key, { params: { order: "1" } })
      assert.strictEqual(code(noKey), "validation_error")
      const missing = yield* caller(
        "POST",
        "/api/v1/templates/refund/raise",
        org.key,
        { params: { order: "1" } },
        { "idempotency-key": "raise-2" }
      )
      assert.strictEqual(code(missing), "validation_error")
      assert.include(
        missing.json.error.details.map((d: { field: string }) => d.field),
        "params.customer"
      )
      const unknown = yield* caller(
        "POST",
        "/api/v1/templates/nope/raise",
        org.key,
        { params: {} },
        { "idempotency-key": "raise-3" }
      )
      assert.strictEqual(code(unknown), "unknown_template")
      assert.deepStrictEqual(unknown.json.error.details.validTemplates, ["refund"])

      const byUser = yield* workspace("POST", "/api/v1/workspace/templates/refund/raise", ada, {
        params: { order: "7", customer: "Lin", recordId: "recBBBBBBBBBBBBBB" }
      })
      assert.strictEqual(byUser.status, 201, byUser.text)
      assert.strictEqual(byUser.json.data.decision.callerName, "ada@acme.test")

      const renamed = yield* workspace("PATCH", "/api/v1/workspace/templates/refund", org.admin, {
        name: "Refunds",
        bodyTemplate: null
      })
      assert.strictEqual(renamed.json.data.template.name, "Refunds")
      assert.isUndefined(renamed.json.data.template.bodyTemplate)
      const slugChange = yield* workspace("PATCH", "/api/v1/workspace/templates/refund", org.admin, { slug: "other" })
      assert.strictEqual(code(slugChange), "validation_error")
      const empty = yield* workspace("PATCH", "/api/v1/workspace/templates/refund", org.admin, {})
      assert.strictEqual(code(empty), "validation_error")

      const archived = yield* workspace("POST", "/api/v1/workspace/templates/refund/archive", org.admin)
      assert.isDefined(archived.json.data.template.archivedAt)
      const afterArchive = yield* caller(
        "POST",
        "/api/v1/templates/refund/raise",
        org.key,
        { params: { order: "1", customer: "x", recordId: "r" } },
        { "idempotency-key": "raise-4" }
      )
      assert.strictEqual(code(afterArchive), "unknown_template")
      assert.deepStrictEqual(afterArchive.json.error.details.validTemplates, [])

      const otherOrg = yield* financeOrganization(baseUrl, "globex")
      const foreign = yield* workspace("GET", "/api/v1/workspace/templates/refund", otherOrg.admin)
      assert.strictEqual(foreign.status, 404)
    }).pipe(Effect.scoped)
  )

  it.live(
    "registers signed webhook endpoints (secret once, https or dev loopback only); admins list and disable them",
    () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* serve()
        const org = yield* financeOrganization(baseUrl, "acme")
        const { caller, workspace } = decisionsClient(baseUrl)
        const registered = yield* caller("POST", "/api/v1/webhooks", org.key, {
          url: "https://hooks.example.com/decisions"
        })
        assert.strictEqual(registered.status, 201, registered.text)
        assert.match(registered.json.data.secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
        const webhook = registered.json.data.webhook
        assert.deepStrictEqual(Object.keys(webhook).sort(), ["createdAt", "id", "url"])
        const local = yield* caller("POST", "/api/v1/webhooks", org.key, { url: "http://127.0.0.1:9999/hook" })
        assert.strictEqual(local.status, 201, "http to loopback is allowed outside production")
        for (const url of ["http://hooks.example.com/x", "https://10.0.0.1/x", "https://169.254.169.254/"]) {
          const refused = yield* caller("POST", "/api/v1/webhooks", org.key, { url })
          assert.strictEqual(code(refused), "validation_error", url)
          assert.strictEqual(refused.json.error.details[0].field, "url")
        }
        const ada = yield* identityToken("ada@acme.test", "acme")
        assert.strictEqual((yield* workspace("GET", "/api/v1/workspace/webhooks", ada)).status, 403)
        const listed = yield* workspace("GET", "/api/v1/workspace/webhooks", org.admin)
        assert.strictEqual(listed.json.data.webhooks.length, 2)
        assert.notInclude(listed.text, registered.json.data.secret)
        assert.notInclude(listed.text, "whsec_")
        const disabled = yield* workspace("POST", `/api/v1/workspace/webhooks/${webhook.id}/disable`, org.admin)
        assert.isDefined(disabled.json.data.webhook.disabledAt)
        const other = yield* financeOrganization(baseUrl, "globex")
        const foreign = yield* workspace("POST", `/api/v1/workspace/webhooks/${webhook.id}/disable`, other.admin)
        assert.strictEqual(foreign.status, 404)
      }).pipe(Effect.scoped)
  )
})
