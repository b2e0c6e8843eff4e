import { assert, describe, it } from "@effect/vitest"
import { layerOf, placeOf, summarize, summaryText, type CpuProfile } from "../../bench/Profile.ts"

const node = (id: number, functionName: string, url: string, hitCount: number) => ({
  id,
  callFrame: { functionName, url, lineNumber: 9 },
  hitCount
})

describe("bench profile summary", () => {
  it("names a place by package, source folder, or what V8 calls it", () => {
    assert.strictEqual(placeOf("file:///w/node_modules/effect/dist/Effect.js", "run"), "effect")
    assert.strictEqual(placeOf("file:///w/node_modules/@effect/sql-pg/dist/PgClient.js", "x"), "@effect/sql-pg")
    assert.strictEqual(placeOf("file:///w/adapters/sql/decisions/DecisionStoreSql.ts", "x"), "adapters/sql")
    assert.strictEqual(placeOf("file:///w/node_modules/.cache/hitl-server/abc/main.mjs", "x"), "(bundled server)")
    assert.strictEqual(placeOf("node:net", "write"), "node internals")
    assert.strictEqual(placeOf("", "writev"), "(writev)")
  })

  it("shares self time by function and by place, leaving idle time out", () => {
    const profile: CpuProfile = {
      nodes: [
        node(1, "(idle)", "", 1000),
        node(2, "runLoop", "file:///w/node_modules/effect/dist/internal/effect.js", 30),
        node(3, "decode", "file:///w/node_modules/effect/dist/SchemaAST.js", 10),
        node(4, "create", "file:///w/core/decisions/Decisions.ts", 10)
      ]
    }
    const summary = summarize(profile, 2)
    assert.deepStrictEqual(summary.places, [
      { name: "effect", percent: 80 },
      { name: "core/decisions", percent: 20 }
    ])
    assert.deepStrictEqual(summary.functions, [
      { name: "runLoop effect.js:10", percent: 60 },
      { name: "decode SchemaAST.js:10", percent: 20 }
    ])
  })

  it("puts each function in its layer of the request stack", () => {
    const at = (path: string) => `file:///w/${path}`
    assert.strictEqual(
      layerOf("node:_http_server", "parserOnHeadersComplete"),
      "listener (Node's HTTP, Effect's server)"
    )
    assert.strictEqual(
      layerOf(at("node_modules/effect/dist/http/HttpServerResponse.js"), "x"),
      "listener (Node's HTTP, Effect's server)"
    )
    assert.strictEqual(layerOf(at("adapters/http/RequestLog.ts"), "x"), "request log, metrics")
    assert.strictEqual(layerOf(at("adapters/http/TextGuard.ts"), "x"), "error envelope, text guard, limits")
    assert.strictEqual(
      layerOf(at("node_modules/effect/dist/SchemaParser.js"), "x"),
      "contract decoding and encoding (schemas, HttpApi)"
    )
    assert.strictEqual(
      layerOf(at("node_modules/effect/dist/http-api/HttpApiBuilder.js"), "x"),
      "contract decoding and encoding (schemas, HttpApi)"
    )
    assert.strictEqual(layerOf(at("adapters/http/decisions/Auth.ts"), "x"), "authentication, budgets")
    assert.strictEqual(layerOf(at("core/decisions/CallerAuthentication.ts"), "x"), "authentication, budgets")
    assert.strictEqual(layerOf(at("adapters/http/IdempotencyMiddleware.ts"), "x"), "idempotency")
    assert.strictEqual(layerOf(at("adapters/http/decisions/Handlers.ts"), "x"), "handler: use case and store")
    assert.strictEqual(layerOf(at("adapters/sql/decisions/DecisionStoreSql.ts"), "x"), "handler: use case and store")
    assert.strictEqual(layerOf(at("node_modules/pg-protocol/dist/parser.js"), "x"), "database client")
    assert.strictEqual(layerOf(at("node_modules/@effect/sql-pg/dist/PgClient.js"), "x"), "database client")
    assert.strictEqual(layerOf("", "(garbage collector)"), "JSON, crypto, buffers, GC (Node)")
    assert.strictEqual(layerOf("", "writev"), "socket writes (answers, database protocol)")
    assert.strictEqual(layerOf("", "digest"), "JSON, crypto, buffers, GC (Node)")
    assert.strictEqual(layerOf(at("node_modules/effect/dist/internal/effect.js"), "runLoop"), "Effect runtime")
    assert.strictEqual(layerOf(at("node_modules/ulid/dist/index.js"), "x"), "other")
  })

  it("gives each layer its share and its time per request", () => {
    const profile: CpuProfile = {
      nodes: [
        node(1, "(idle)", "", 1000),
        node(2, "runLoop", "file:///w/node_modules/effect/dist/internal/effect.js", 30),
        node(3, "log", "file:///w/adapters/http/RequestLog.ts", 10)
      ],
      // 40 busy samples of 250 µs each: 10 ms.
      timeDeltas: [250, 250, 250, 250]
    }
    const summary = summarize(profile)
    assert.strictEqual(summary.busyMillis, 10)
    assert.deepInclude(summary.layers, { name: "Effect runtime", percent: 75 })
    assert.deepInclude(summary.layers, { name: "request log, metrics", percent: 25 })
    assert.deepInclude(summary.layers, { name: "idempotency", percent: 0 })
    // 10 ms over 100 requests: 100 µs each, 75 in the runtime and 25 in the log.
    const text = summaryText(summary, 100)
    assert.include(text, "CPU per request: 100 µs over 100 requests")
    assert.match(text, /75\.0%\s+75\.0 µs\s+Effect runtime/)
    assert.match(text, /25\.0%\s+25\.0 µs\s+request log, metrics/)
  })
})
