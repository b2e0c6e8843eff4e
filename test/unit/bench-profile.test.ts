import { assert, describe, it } from "@effect/vitest"
import { placeOf, summarize, type CpuProfile } from "../../bench/Profile.ts"

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
})
