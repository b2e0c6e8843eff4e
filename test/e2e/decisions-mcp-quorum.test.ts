import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect, Layer } from "effect"
import { IdempotencyStoreMemory } from "../../adapters/memory/IdempotencyStoreMemory.ts"
import { pglite } from "../support/Databases.ts"
import { DecisionsMemory } from "../support/DecisionsMemory.ts"
import { decisionsSqlOn } from "../support/DecisionsSql.ts"
import { decisionsClient, financeOrganization, identityToken, serveDecisions } from "../support/DecisionsServed.ts"

/** An agent asks for a quorum through the MCP tools and reads the votes and the tally back. */
const backends = [
  { name: "memory", data: Layer.merge(DecisionsMemory, IdempotencyStoreMemory) },
  { name: "sql", data: decisionsSqlOn(pglite) }
]

const connect = (baseUrl: string, key: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "test-agent", version: "1.0.0" })
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${key}` } }
        })
      )
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

const call = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.promise(async () => {
    const result = await client.callTool({ name, arguments: args })
    const content = result.content as Array<{ type: string; text: string }>
    return { isError: result.isError === true, text: JSON.parse(content[0]!.text) as any }
  })

describe.each(backends)("a quorum through the agent tools ($name adapters)", (backend) => {
  it.live(
    "request_decision takes quorum (refusing one nobody could reach); get_decision shows votes and tally",
    () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* serveDecisions(backend.data)
        const org = yield* financeOrganization(baseUrl, "acme")
        const { workspace } = decisionsClient(baseUrl)
        const assigned = yield* workspace("POST", "/api/v1/workspace/roles/finance/assignments", org.admin, {
          memberEmail: "bob@acme.test"
        })
        assert.strictEqual(assigned.status, 201, assigned.text)
        const client = yield* connect(baseUrl, org.key)

        const tools = yield* Effect.promise(() => client.listTools())
        const request = tools.tools.find((t) => t.name === "request_decision")!
        assert.property(request.inputSchema.properties, "quorum")

        const args = {
          title: "Refund order 1042?",
          roleSlug: "finance",
          options: [
            { id: "refund", label: "Refund" },
            { id: "replace", label: "Replace" }
          ]
        }
        const refused = yield* call(client, "request_decision", {
          ...args,
          quorum: { count: 3 },
          idempotencyKey: crypto.randomUUID()
        })
        assert.isTrue(refused.isError)
        assert.strictEqual(refused.text.error.code, "validation_error")
        assert.deepStrictEqual(
          refused.text.error.details.map((d: { field: string }) => d.field),
          ["quorum.count"]
        )

        const created = yield* call(client, "request_decision", {
          ...args,
          quorum: { count: 2 },
          idempotencyKey: crypto.randomUUID()
        })
        assert.isFalse(created.isError, JSON.stringify(created.text))
        const id = created.text.decision.id as string
        assert.deepStrictEqual(created.text.decision.quorum.tally, { options: { refund: 0, replace: 0 }, declined: 0 })

        const ada = yield* workspace("POST", `/api/v1/workspace/decisions/${id}/choose`, org.ada, {
          optionId: "refund"
        })
        assert.strictEqual(ada.status, 200, ada.text)
        const read = (yield* call(client, "get_decision", { id })).text.decision
        assert.strictEqual(read.status, "pending")
        assert.deepStrictEqual(read.quorum.tally, { options: { refund: 1, replace: 0 }, declined: 0 })
        assert.deepStrictEqual(
          read.quorum.votes.map((v: { by: string; optionId: string }) => [v.by, v.optionId]),
          [["ada@acme.test", "refund"]]
        )

        const bob = yield* identityToken("bob@acme.test", "acme")
        yield* workspace("POST", `/api/v1/workspace/decisions/${id}/choose`, bob, { optionId: "refund" })
        const done = (yield* call(client, "get_decision", { id })).text.decision
        assert.strictEqual(done.status, "resolved")
        assert.deepStrictEqual(
          done.resolution.votes.map((v: { by: string }) => v.by),
          ["ada@acme.test", "bob@acme.test"]
        )
      }),
    120_000
  )
})
