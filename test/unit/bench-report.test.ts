import { assert, describe, it } from "@effect/vitest"
import {
  asExtraFigures,
  failedRuns,
  markdownTable,
  percentile,
  ratio,
  textTable,
  type Figures,
  type Row
} from "../../bench/Report.ts"

const figures = (overrides: Partial<Figures> = {}): Figures => ({
  requests: 1000,
  seconds: 2,
  requestsPerSecond: 500,
  p50Ms: 1.234,
  p99Ms: 12.5,
  non2xx: {},
  errors: 0,
  ...overrides
})

const row = (overrides: Partial<Row> = {}): Row => ({
  path: "decision create",
  database: "embedded",
  connections: 32,
  server: figures(),
  baseline: figures({ requestsPerSecond: 2000, cpuMsPerRequest: 0.25 }),
  ...overrides
})

describe("bench report", () => {
  it("takes the nearest-rank percentile of sorted latencies, and 0 of none", () => {
    const sorted = Float64Array.from({ length: 100 }, (_, i) => i + 1)
    assert.strictEqual(percentile(sorted, 50), 50)
    assert.strictEqual(percentile(sorted, 99), 99)
    assert.strictEqual(percentile(sorted, 100), 100)
    assert.strictEqual(percentile([7], 99), 7)
    assert.strictEqual(percentile([], 50), 0)
  })

  it("gives the server's throughput as a fraction of the baseline's, none without a baseline", () => {
    assert.strictEqual(ratio(figures(), figures({ requestsPerSecond: 2000 })), 0.25)
    assert.strictEqual(ratio(figures(), undefined), undefined)
    assert.strictEqual(ratio(figures(), figures({ requestsPerSecond: 0 })), undefined)
  })

  it("names every run that saw an answer outside 2xx or a connection error", () => {
    assert.deepStrictEqual(failedRuns([row()]), [])
    const failed = failedRuns([
      row({ server: figures({ non2xx: { "429": 3, "500": 1 } }) }),
      row({ path: "event ingest", connections: 1, baseline: figures({ errors: 2 }) })
    ])
    assert.deepStrictEqual(failed, [
      "decision create (embedded, 32 conn) server: 3 × 429, 1 × 500",
      "event ingest (embedded, 1 conn) baseline: 2 errors"
    ])
  })

  it("prints one aligned line per row with the failures counted and the ratio", () => {
    const table = textTable([row(), row({ connections: 1, server: figures({ non2xx: { "500": 4 } }) })])
    const lines = table.split("\n")
    assert.strictEqual(lines.length, 4)
    assert.match(lines[0]!, /^path\s+database\s+conn\s+req\/s\s+p50 ms\s+p99 ms\s+cpu ms\s+non-2xx\s+raw req\/s/)
    // The server's CPU per answer was not read (-), the baseline's was (0.25 ms).
    assert.match(
      lines[2]!,
      /^decision create\s+embedded\s+32\s+500\s+1\.23\s+12\.5\s+-\s+0\s+2,000\s+1\.23\s+12\.5\s+0\.25\s+0\s+0\.25$/
    )
    assert.match(lines[3]!, /\s4\s/)
    assert.strictEqual(new Set(lines.map((line) => line.length)).size <= 2, true)
  })

  it("writes the same rows as a markdown table, with the plugged-in figures below", () => {
    const markdown = markdownTable(
      [row({ server: figures({ cpuMsPerRequest: 1.5 }), baseline: undefined })],
      [{ name: "start", value: 2500, unit: "ms" }]
    )
    const lines = markdown.split("\n")
    assert.strictEqual(
      lines[1],
      "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    )
    assert.strictEqual(
      lines[2],
      "| decision create | embedded | 32 | 500 | 1.23 | 12.5 | 1.50 | 0 | - | - | - | - | - | - |"
    )
    assert.strictEqual(lines[4], "- start: 2500 ms")
  })

  it("turns what a plugged-in script answers into named figures", () => {
    assert.deepStrictEqual(
      asExtraFigures("start", [
        {
          database: "embedded",
          runs: [
            { kind: "fresh", readyMillis: 4000 },
            { kind: "restart", readyMillis: 2500 }
          ],
          medianMillis: 2500
        }
      ]),
      [
        { name: "start (embedded) runs", value: "fresh 4000 ms, restart 2500 ms" },
        { name: "start (embedded) median", value: 2500, unit: "ms" }
      ]
    )
    assert.deepStrictEqual(asExtraFigures("longpoll", { name: "wake p50", value: 3.2, unit: "ms" }), [
      { name: "wake p50", value: 3.2, unit: "ms" }
    ])
    assert.deepStrictEqual(asExtraFigures("longpoll", 7), [{ name: "longpoll", value: 7 }])
  })
})
