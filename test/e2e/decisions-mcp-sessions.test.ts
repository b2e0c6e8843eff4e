import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { pglite } from "../support/Databases.ts"
import { decisionsSqlOn } from "../support/DecisionsSql.ts"
import { newCallerKey, serveDecisions } from "../support/DecisionsServed.ts"

/**
 * `count` instances of the decisions service over one database (each with its own routes, MCP endpoint and
 * budgets: they share nothing but the data), as a load balancer spreads them.
 */
const instances = (count: number, callerRequestsPerMinute = 10_000) =>
  Effect.gen(function* () {
    const data = yield* Layer.build(decisionsSqlOn(pglite))
    const urls: Array<string> = []
    for (let i = 0; i < count; i++) {
      const { baseUrl } = yield* serveDecisions(Layer.succeedContext(data), {
        settings: { decisionsCallerRequestsPerMinute: callerRequestsPerMinute }
      })
      urls.push(baseUrl)
    }
    return urls
  })

interface RpcAnswer {
  readonly status: number
  readonly session: string | null
  readonly json: any
}

/** One JSON-RPC message POSTed to `/mcp` as a Streamable HTTP client sends it; an SSE answer is read too. */
const rpc = (baseUrl: string, key: string, message: unknown, session?: string) =>
  Effect.promise(async (): Promise<RpcAnswer> => {
    const response = await fetch(`${baseUrl}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...(session === undefined ? {} : { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" })
      },
      body: JSON.stringify(message)
    })
    const text = await response.text()
    const data = (response.headers.get("content-type") ?? "").includes("event-stream")
      ? text
          .split("\n")
          .find((line) => line.startsWith("data:"))
          ?.slice(5)
      : text
    return {
      status: response.status,
      session: response.headers.get("mcp-session-id"),
      json: data ? JSON.parse(data) : undefined
    }
  })

const initialize = (baseUrl: string, key: string, clientInfo: unknown = { name: "agent", version: "1.0.0" }) =>
  rpc(baseUrl, key, {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo }
  })

const listTools = (baseUrl: string, key: string, session: string) =>
  rpc(baseUrl, key, { jsonrpc: "2.0", id: 2, method: "tools/list" }, session)

describe("MCP sessions of the decisions service (SQL adapters, instances sharing only the database)", () => {
  it.live("a session opened on one instance serves on another; ending it on either ends it everywhere", () =>
    Effect.gen(function* () {
      const [a, b] = yield* instances(2)
      const key = yield* newCallerKey(a!)
      const opened = yield* initialize(a!, key)
      assert.strictEqual(opened.status, 200)
      assert.isString(opened.session)
      assert.strictEqual(opened.json.result.serverInfo.name, "decisions")

      const onB = yield* listTools(b!, key, opened.session!)
      assert.strictEqual(onB.status, 200, JSON.stringify(onB.json))
      assert.sameMembers(
        onB.json.result.tools.map((t: any) => t.name),
        ["request_decision", "get_decision", "list_pending", "respond_to_info_request"]
      )
      const created = yield* rpc(
        b!,
        key,
        {
          jsonrpc: "2.0",
          id: 3,
          method: "tools/call",
          params: {
            name: "request_decision",
            arguments: {
              title: "Ship it?",
              roleSlug: "finance",
              options: [{ label: "Yes" }, { label: "No" }],
              idempotencyKey: "ship-1"
            }
          }
        },
        opened.session!
      )
      assert.strictEqual(created.status, 200)
      const id = created.json.result.structuredContent.decision.id as string
      const read = yield* rpc(
        a!,
        key,
        { jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "get_decision", arguments: { id } } },
        opened.session!
      )
      assert.strictEqual(read.json.result.structuredContent.decision.title, "Ship it?")

      // Another key cannot use the session, and does not learn it exists.
      const otherKey = yield* newCallerKey(a!)
      assert.strictEqual((yield* listTools(a!, otherKey, opened.session!)).status, 404)

      const ended = yield* Effect.promise(() =>
        fetch(`${a}/mcp`, {
          method: "DELETE",
          headers: { authorization: `Bearer ${key}`, "mcp-session-id": opened.session! }
        })
      )
      assert.strictEqual(ended.status, 204)
      const after = yield* listTools(b!, key, opened.session!)
      assert.strictEqual(after.status, 404)
      assert.strictEqual(after.json.error.code, "NOT_FOUND")
    }).pipe(Effect.scoped)
  )

  it.live("initialize params are bounded, and a key holds at most 16 sessions: the least recently used go", () =>
    Effect.gen(function* () {
      const [a] = yield* instances(1)
      const key = yield* newCallerKey(a!)
      const huge = yield* initialize(a!, key, { name: "agent", version: "1.0.0", padding: "x".repeat(200_000) })
      assert.strictEqual(huge.status, 400)
      assert.strictEqual(huge.json.error.code, "validation_error")
      assert.isNull(huge.session)

      const first = (yield* initialize(a!, key)).session!
      const sessions: Array<string> = []
      for (let i = 0; i < 16; i++) sessions.push((yield* initialize(a!, key)).session!)
      assert.strictEqual((yield* listTools(a!, key, first)).status, 404)
      for (const session of sessions) assert.strictEqual((yield* listTools(a!, key, session)).status, 200)
    }).pipe(Effect.scoped)
  )

  it.live("a caller key has one budget across the HTTP caller plane and /mcp", () =>
    Effect.gen(function* () {
      const [a] = yield* instances(1, 6)
      const key = yield* newCallerKey(a!)
      for (let i = 0; i < 3; i++) {
        const listed = yield* Effect.promise(() =>
          fetch(`${a}/api/v1/decisions`, { headers: { authorization: `Bearer ${key}` } })
        )
        assert.strictEqual(listed.status, 200)
      }
      const opened = yield* initialize(a!, key)
      assert.strictEqual(opened.status, 200)
      assert.strictEqual((yield* listTools(a!, key, opened.session!)).status, 200)
      assert.strictEqual((yield* listTools(a!, key, opened.session!)).status, 200)
      const over = yield* listTools(a!, key, opened.session!)
      assert.strictEqual(over.status, 429)
      assert.strictEqual(over.json.error.code, "RATE_LIMITED")
      const overHttp = yield* Effect.promise(() =>
        fetch(`${a}/api/v1/decisions`, { headers: { authorization: `Bearer ${key}` } })
      )
      assert.strictEqual(overHttp.status, 429)
    }).pipe(Effect.scoped)
  )
})
