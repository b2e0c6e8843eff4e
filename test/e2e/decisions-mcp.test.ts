import { assert, beforeAll, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect, Fiber, Layer } from "effect"
import { IdempotencyStoreMemory } from "../../adapters/memory/IdempotencyStoreMemory.ts"
import { pglite } from "../support/Databases.ts"
import { DecisionsMemory } from "../support/DecisionsMemory.ts"
import { decisionsSqlOn } from "../support/DecisionsSql.ts"
import { request } from "../support/Http.ts"
import type { ServiceSettings } from "../../apps/server/Services.ts"
import { decisionsClient, financeOrganization, serveDecisions } from "../support/DecisionsServed.ts"

/** Every test runs on the memory adapters and on the SQL adapters (embedded PGlite, fresh per test). */
const backends = [
  { name: "memory", data: Layer.merge(DecisionsMemory, IdempotencyStoreMemory) },
  { name: "sql", data: decisionsSqlOn(pglite) }
]

let data = backends[0]!.data

const serve = (settings: Partial<ServiceSettings> = {}) => serveDecisions(data, { settings })

/** The official MCP client over Streamable HTTP, closed with the test's scope. */
const connect = (baseUrl: string, key: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "test-agent", version: "1.0.0" })
      const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } }
      })
      await client.connect(transport)
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

interface ToolAnswer {
  readonly isError: boolean
  readonly structured: any
  /** The JSON in the first text block: the answer, or the error envelope of a tool error. */
  readonly text: any
}

const call = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.promise(async (): Promise<ToolAnswer> => {
    const result = await client.callTool({ name, arguments: args })
    const content = result.content as Array<{ type: string; text: string }>
    assert.strictEqual(content[0]?.type, "text")
    return {
      isError: result.isError === true,
      structured: result.structuredContent,
      text: JSON.parse(content[0]!.text)
    }
  })

/** A tool call that must succeed: answers its structured content (which the text block repeats). */
const ok = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.map(call(client, name, args), (answer) => {
    assert.isFalse(answer.isError, JSON.stringify(answer.text))
    assert.deepStrictEqual(answer.text, answer.structured)
    return answer.structured
  })

/** A tool call that must be a tool error: answers its envelope's `error`. */
const toolError = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.map(call(client, name, args), (answer) => {
    assert.isTrue(answer.isError, JSON.stringify(answer.text))
    assert.isUndefined(answer.structured)
    assert.deepStrictEqual(Object.keys(answer.text), ["error"])
    return answer.text.error
  })

const decisionArgs = {
  title: "Refund order 1042?",
  roleSlug: "finance",
  body: "The customer reports a **damaged** item.",
  facts: [{ label: "Amount", value: "€120" }],
  options: [{ label: "Refund" }, { label: "Replace", description: "Ship a new one" }],
  urgency: "urgent"
}

const requestDecision = (client: Client, args: Record<string, unknown> = decisionArgs) =>
  ok(client, "request_decision", { ...args, idempotencyKey: crypto.randomUUID() })

describe.each(backends)(
  "decisions agent tools (MCP over Streamable HTTP at /mcp, real socket, $name adapters)",
  (backend) => {
    beforeAll(() => {
      data = backend.data
    })

    it.live("answers the address of the decision's page in the workspace, to hand a person", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* serve({ workspaceUrl: "https://work.example.com/" })
        const org = yield* financeOrganization(baseUrl, "acme")
        const client = yield* connect(baseUrl, org.key)
        const created = (yield* requestDecision(client)).decision
        assert.strictEqual(created.url, `https://work.example.com/apps/decisions/decision-${created.id}`)
        const read = (yield* ok(client, "get_decision", { id: created.id })).decision
        assert.strictEqual(read.url, created.url)
      })
    )

    it.live("lists the four tools with their input schemas", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* serve()
        const org = yield* financeOrganization(baseUrl, "acme")
        const client = yield* connect(baseUrl, org.key)
        assert.strictEqual(client.getServerVersion()?.name, "decisions")

        const { tools } = yield* Effect.promise(() => client.listTools())
        const byName = new Map(tools.map((t) => [t.name, t]))
        assert.deepStrictEqual([...byName.keys()].sort(), [
          "get_decision",
          "list_pending",
          "request_decision",
          "respond_to_info_request"
        ])
        const input = (name: string) => byName.get(name)!.inputSchema as any
        assert.strictEqual(input("request_decision").type, "object")
        assert.includeMembers(input("request_decision").required, ["title", "roleSlug", "options", "idempotencyKey"])
        assert.includeMembers(Object.keys(input("request_decision").properties), [
          "body",
          "facts",
          "links",
          "urgency",
          "expiresAt",
          "idempotencyKey"
        ])
        assert.strictEqual(input("request_decision").properties.options.minItems, 2)
        assert.strictEqual(input("request_decision").properties.options.maxItems, 5)
        assert.deepStrictEqual(input("get_decision").required, ["id"])
        assert.strictEqual(input("get_decision").properties.wait.maximum, 60)
        assert.deepStrictEqual(Object.keys(input("list_pending").properties).sort(), ["cursor", "limit"])
        assert.isUndefined(input("list_pending").required)
        assert.deepStrictEqual(input("respond_to_info_request").required.sort(), [
          "answer",
          "decisionId",
          "infoRequestId"
        ])
        for (const tool of tools) {
          assert.isString(tool.description)
          assert.strictEqual((tool.outputSchema as any)?.type, "object", tool.name)
        }
        assert.isTrue(byName.get("get_decision")!.annotations?.readOnlyHint)
        assert.isTrue(byName.get("request_decision")!.annotations?.idempotentHint)
      })
    )

    it.live("refuses a missing, malformed or unknown caller key with 401 and the envelope", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* serve()
        yield* financeOrganization(baseUrl, "acme")
        const initialize = JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
        })
        for (const authorization of [undefined, "Bearer dcd_not-a-real-key", "Bearer not-even-dcd", "Basic abc"]) {
          const refused = yield* request(`${baseUrl}/mcp`, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
              ...(authorization === undefined ? {} : { authorization })
            },
            body: initialize
          })
          assert.strictEqual(refused.status, 401, `${authorization}: ${refused.text}`)
          assert.deepStrictEqual(refused.json, {
            error: { code: "UNAUTHORIZED", message: "Missing or invalid credentials." }
          })
        }

        // The official client sees the refusal as HTTP 401 and never gets a session.
        for (const key of [undefined, "dcd_wrong"]) {
          const failure = yield* Effect.flip(
            Effect.tryPromise(async () => {
              const client = new Client({ name: "test-agent", version: "1.0.0" })
              const transport = new StreamableHTTPClientTransport(
                new URL(`${baseUrl}/mcp`),
                key === undefined ? {} : { requestInit: { headers: { authorization: `Bearer ${key}` } } }
              )
              await client.connect(transport)
            })
          )
          const cause = failure.cause as { code?: number; message: string }
          assert.strictEqual(cause.code, 401, cause.message)
          assert.include(cause.message, "UNAUTHORIZED")
        }
      })
    )

    it.live("walks a decision: request, read, a question, list as needs_info, answer, choose, long-poll", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* serve()
        const org = yield* financeOrganization(baseUrl, "acme")
        const client = yield* connect(baseUrl, org.key)

        const created = (yield* ok(client, "request_decision", {
          ...decisionArgs,
          idempotencyKey: "refund-1042"
        })).decision
        assert.strictEqual(created.status, "pending")
        assert.strictEqual(created.callerName, "billing-agent")
        assert.strictEqual(created.organizationId, "acme")
        assert.deepStrictEqual(created.routing, { assigneeCount: 1, unrouted: false })
        assert.isUndefined(created.version)
        assert.deepStrictEqual(
          created.options.map((o: { label: string }) => o.label),
          ["Refund", "Replace"]
        )

        // The tool answers the decision exactly as the HTTP caller plane does.
        const read = (yield* ok(client, "get_decision", { id: created.id })).decision
        const overHttp = yield* request(`${baseUrl}/api/v1/decisions/${created.id}`, {
          headers: { authorization: `Bearer ${org.key}` }
        })
        assert.strictEqual(overHttp.status, 200, overHttp.text)
        assert.deepStrictEqual(read, overHttp.json.data.decision)

        const asked = yield* decisionsClient(baseUrl).workspace(
          "POST",
          `/api/v1/workspace/decisions/${created.id}/info-requests`,
          org.ada,
          {
            question: "Was the item photographed?"
          }
        )
        assert.strictEqual(asked.status, 200, asked.text)

        const pending = yield* ok(client, "list_pending", {})
        assert.deepStrictEqual(
          pending.decisions.map((d: { id: string; status: string }) => [d.id, d.status]),
          [[created.id, "needs_info"]]
        )
        assert.isUndefined(pending.nextCursor)
        const infoRequest = pending.decisions[0].infoRequests[0]
        assert.strictEqual(infoRequest.question, "Was the item photographed?")
        assert.strictEqual(infoRequest.askedBy, "ada@acme.test")

        const answered = (yield* ok(client, "respond_to_info_request", {
          decisionId: created.id,
          infoRequestId: infoRequest.id,
          answer: "Yes, three photos are attached to the order."
        })).decision
        assert.strictEqual(answered.status, "pending")
        assert.strictEqual(answered.infoRequests[0].answer, "Yes, three photos are attached to the order.")
        assert.isString(answered.infoRequests[0].answeredAt)

        // Answering again is refused the way the HTTP plane refuses it.
        const again = yield* toolError(client, "respond_to_info_request", {
          decisionId: created.id,
          infoRequestId: infoRequest.id,
          answer: "Again"
        })
        assert.strictEqual(again.code, "invalid_transition")
        assert.deepStrictEqual(again.details, { status: "pending" })

        // A long-poll started before the decider chooses answers with the outcome.
        const waiting = yield* Effect.forkChild(ok(client, "get_decision", { id: created.id, wait: 30 }))
        yield* Effect.sleep("200 millis")
        const chosen = yield* decisionsClient(baseUrl).workspace(
          "POST",
          `/api/v1/workspace/decisions/${created.id}/choose`,
          org.ada,
          {
            optionId: created.options[0].id,
            rationale: "Photos show the damage."
          }
        )
        assert.strictEqual(chosen.status, 200, chosen.text)
        const started = Date.now()
        const outcome = (yield* Fiber.join(waiting)).decision
        assert.isBelow(Date.now() - started, 10_000)
        assert.strictEqual(outcome.status, "resolved")
        assert.strictEqual(outcome.resolution.kind, "chosen")
        assert.strictEqual(outcome.resolution.optionId, created.options[0].id)
        assert.strictEqual(outcome.resolution.decidedBy, "ada@acme.test")

        assert.deepStrictEqual((yield* ok(client, "list_pending", {})).decisions, [])
        const late = yield* toolError(client, "respond_to_info_request", {
          decisionId: created.id,
          infoRequestId: infoRequest.id,
          answer: "Too late"
        })
        assert.strictEqual(late.code, "invalid_transition")
      })
    )

    it.live("answers the current state when a wait runs out without a change", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* serve()
        const org = yield* financeOrganization(baseUrl, "acme")
        const client = yield* connect(baseUrl, org.key)
        const created = (yield* requestDecision(client)).decision

        const started = Date.now()
        const answer = yield* call(client, "get_decision", { id: created.id, wait: 1 })
        const elapsed = Date.now() - started
        assert.isFalse(answer.isError, JSON.stringify(answer.text))
        assert.isAtLeast(elapsed, 900)
        assert.isBelow(elapsed, 5_000)
        assert.strictEqual(answer.structured.decision.id, created.id)
        assert.strictEqual(answer.structured.decision.status, "pending")
        assert.strictEqual(answer.structured.decision.updatedAt, created.updatedAt)
      })
    )

    it.live("creates one decision per idempotency key, however often the agent retries", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* serve()
        const org = yield* financeOrganization(baseUrl, "acme")
        const client = yield* connect(baseUrl, org.key)
        const args = { ...decisionArgs, idempotencyKey: "agent-run-7/step-3" }

        const first = yield* ok(client, "request_decision", args)
        // The same arguments in another key order are the same request.
        const reordered = Object.fromEntries(Object.entries(args).reverse())
        const retries = yield* Effect.all(
          [ok(client, "request_decision", args), ok(client, "request_decision", reordered)],
          { concurrency: "unbounded" }
        )
        for (const retry of retries) assert.deepStrictEqual(retry, first)

        // A second connection with the same caller key shares the key space.
        const other = yield* connect(baseUrl, org.key)
        assert.deepStrictEqual(yield* ok(other, "request_decision", args), first)

        const open = yield* ok(client, "list_pending", {})
        assert.deepStrictEqual(
          open.decisions.map((d: { id: string }) => d.id),
          [first.decision.id]
        )

        const conflict = yield* toolError(client, "request_decision", { ...args, title: "Something else" })
        assert.strictEqual(conflict.code, "idempotency_conflict")

        // Another key creates another decision.
        const second = yield* ok(client, "request_decision", { ...args, idempotencyKey: "agent-run-7/step-4" })
        assert.notStrictEqual(second.decision.id, first.decision.id)
        assert.lengthOf((yield* ok(client, "list_pending", {})).decisions, 2)

        const badKey = yield* toolError(client, "request_decision", { ...args, idempotencyKey: "has space" })
        assert.strictEqual(badKey.code, "validation_error")
        assert.deepStrictEqual(
          badKey.details.map((d: { field: string }) => d.field),
          ["idempotencyKey"]
        )
      })
    )

    it.live("answers bad input with tool errors carrying the HTTP codes", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* serve()
        const acme = yield* financeOrganization(baseUrl, "acme")
        const globex = yield* financeOrganization(baseUrl, "globex")
        const client = yield* connect(baseUrl, acme.key)

        const { title: _title, ...untitled } = decisionArgs
        const missingTitle = yield* toolError(client, "request_decision", { ...untitled, idempotencyKey: "k1" })
        assert.strictEqual(missingTitle.code, "validation_error")
        assert.include(missingTitle.message, "title")
        assert.deepStrictEqual(
          missingTitle.details.map((d: { field: string }) => d.field),
          ["title"]
        )

        const several = yield* toolError(client, "request_decision", {
          ...decisionArgs,
          options: [{ label: "Only one" }],
          urgency: "whenever",
          idempotencyKey: "k2"
        })
        assert.strictEqual(several.code, "validation_error")
        assert.sameMembers(
          several.details.map((d: { field: string }) => d.field),
          ["options", "urgency"]
        )

        const unknownRole = yield* toolError(client, "request_decision", {
          ...decisionArgs,
          roleSlug: "legal",
          idempotencyKey: "k3"
        })
        assert.strictEqual(unknownRole.code, "unknown_role")
        assert.strictEqual(unknownRole.message, "The role is not known.")
        assert.deepStrictEqual(unknownRole.details, { validRoles: ["finance"] })

        const tooLong = yield* toolError(client, "request_decision", {
          ...decisionArgs,
          body: "x".repeat(32769),
          idempotencyKey: "k4"
        })
        assert.strictEqual(tooLong.code, "payload_too_large")

        const noDecision = yield* toolError(client, "get_decision", { id: "01JNOSUCHDECISION0000000000" })
        assert.deepStrictEqual(noDecision, { code: "NOT_FOUND", message: "No such decision." })

        // Another organization's decision is answered exactly like a missing one, by every tool.
        const globexClient = yield* connect(baseUrl, globex.key)
        const foreign = (yield* requestDecision(globexClient)).decision
        assert.deepStrictEqual(yield* toolError(client, "get_decision", { id: foreign.id }), noDecision)
        assert.deepStrictEqual(yield* toolError(client, "get_decision", { id: foreign.id, wait: 1 }), noDecision)
        assert.deepStrictEqual(
          yield* toolError(client, "respond_to_info_request", {
            decisionId: foreign.id,
            infoRequestId: "x",
            answer: "y"
          }),
          noDecision
        )
        assert.deepStrictEqual((yield* ok(client, "list_pending", {})).decisions, [])
        assert.lengthOf((yield* ok(globexClient, "list_pending", {})).decisions, 1)

        const longWait = yield* toolError(client, "get_decision", { id: foreign.id, wait: 61 })
        assert.strictEqual(longWait.code, "validation_error")
        assert.deepStrictEqual(
          longWait.details.map((d: { field: string }) => d.field),
          ["wait"]
        )
        const badLimit = yield* toolError(client, "list_pending", { limit: 0 })
        assert.deepStrictEqual(
          badLimit.details.map((d: { field: string }) => d.field),
          ["limit"]
        )
        const emptyAnswer = yield* toolError(client, "respond_to_info_request", {
          decisionId: foreign.id,
          infoRequestId: "x"
        })
        assert.deepStrictEqual(
          emptyAnswer.details.map((d: { field: string }) => d.field),
          ["answer"]
        )
      })
    )

    it.live("pages open decisions, newest first, with cursor and limit; closed ones are not listed", () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* serve()
        const org = yield* financeOrganization(baseUrl, "acme")
        const client = yield* connect(baseUrl, org.key)
        const ids: Array<string> = []
        for (let i = 0; i < 4; i++) ids.push((yield* requestDecision(client)).decision.id)
        const cancelled = yield* request(`${baseUrl}/api/v1/decisions/${ids[1]}/cancel`, {
          method: "POST",
          headers: { authorization: `Bearer ${org.key}` }
        })
        assert.strictEqual(cancelled.status, 200, cancelled.text)

        const first = yield* ok(client, "list_pending", { limit: 2 })
        assert.deepStrictEqual(
          first.decisions.map((d: { id: string }) => d.id),
          [ids[3], ids[2]]
        )
        assert.isString(first.nextCursor)
        for (const decision of first.decisions) {
          assert.deepStrictEqual(decision.routing, { assigneeCount: 1, unrouted: false })
        }
        const second = yield* ok(client, "list_pending", { limit: 2, cursor: first.nextCursor })
        assert.deepStrictEqual(
          second.decisions.map((d: { id: string }) => d.id),
          [ids[0]]
        )
        assert.isUndefined(second.nextCursor)
      })
    )
  }
)
