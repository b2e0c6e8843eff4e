import { execFile } from "node:child_process"
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { promisify } from "node:util"
import { afterAll, assert, beforeAll, describe, it } from "vitest"

const run = promisify(execFile)

/** A tree laid out as the repository's, holding only the files given, linted with the repository's own rules. */
let tree: string
const files: Record<string, string> = {
  "core/kernel/Fine.ts": `import { Effect } from "effect"\nimport { createHash } from "node:crypto"\nexport const fine = [Effect, createHash]\n`,
  "core/kernel/ReachesAdapter.ts": `import { Db } from "../../adapters/sql/Db.ts"\nexport const bad = Db\n`,
  "core/kernel/DoesIo.ts": `import { readFile } from "node:fs/promises"\nimport { SqlClient } from "effect/sql"\nexport const bad = [readFile, SqlClient]\n`,
  "adapters/sql/Db.ts": `export const Db = 1\n`,
  "adapters/http/hub/ReachesSql.ts": `import { Db } from "../../sql/Db.ts"\nexport const bad = Db\n`,
  "adapters/mcp/UsesHttp.ts": `import { Envelope } from "../http/Envelope.ts"\nexport const fine = Envelope\n`,
  "adapters/http/Envelope.ts": `export const Envelope = 1\n`,
  "adapters/memory/A.ts": `import { b } from "./B.ts"\nexport const a = () => b\n`,
  "adapters/memory/B.ts": `import type { a } from "./A.ts"\nexport const b = (): typeof a | undefined => undefined\n`
}

beforeAll(() => {
  tree = mkdtempSync(join(tmpdir(), "import-rules-"))
  cpSync(".oxlintrc.json", join(tree, ".oxlintrc.json"))
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(tree, path)), { recursive: true })
    writeFileSync(join(tree, path), text)
  }
})

afterAll(() => rmSync(tree, { recursive: true, force: true }))

/** The linter's findings: each file with its message, the rule's code and the help text naming the rule. */
const lint = async () => {
  const oxlint = join(process.cwd(), "node_modules", ".bin", "oxlint")
  const output = await run(oxlint, ["--format=json", "-c", ".oxlintrc.json", "."], { cwd: tree }).then(
    ({ stdout }) => stdout,
    (error: { stdout?: string }) => error.stdout ?? ""
  )
  const report = JSON.parse(output) as {
    diagnostics: Array<{ filename: string; message: string; code: string; help?: string }>
  }
  return report.diagnostics.map((d) => `${d.filename}: ${d.code} ${d.message} ${d.help ?? ""}`)
}

describe("the import rules of `npm run check` (.oxlintrc.json)", () => {
  it("refuses core importing an adapter or I/O, an adapter importing another, and circles; allows the rest", async () => {
    const findings = await lint()
    const of = (file: string) => findings.filter((line) => line.startsWith(`${file}:`))
    assert.lengthOf(of("core/kernel/ReachesAdapter.ts"), 1, findings.join("\n"))
    assert.lengthOf(of("core/kernel/DoesIo.ts"), 2, findings.join("\n"))
    assert.lengthOf(of("adapters/http/hub/ReachesSql.ts"), 1, findings.join("\n"))
    assert.isAbove(of("adapters/memory/A.ts").length + of("adapters/memory/B.ts").length, 0, findings.join("\n"))
    assert.deepStrictEqual(of("core/kernel/Fine.ts"), [])
    assert.deepStrictEqual(of("adapters/mcp/UsesHttp.ts"), [])
    for (const line of of("core/kernel/ReachesAdapter.ts")) assert.include(line, "core is the pure domain")
    for (const line of of("adapters/http/hub/ReachesSql.ts")) assert.include(line, "adapters/http may import core")
    for (const line of [...of("adapters/memory/A.ts"), ...of("adapters/memory/B.ts")]) assert.include(line, "cycle")
  })
})
