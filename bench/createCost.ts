/**
 * What one decision create costs on a Postgres server, in figures that hold on a shared machine: the
 * statements the server sends per create (counted in the Postgres log of a database of this run's own), and
 * the CPU time per create of the server's processes and of the database backends serving them (from /proc),
 * over a fixed number of creates at one connection and then at 32; p50 and rate are printed beside them.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/createCost.ts [--creates=1000] [--hub-down]
 *
 * `--hub-down` points the server at an unreachable hub, so no notification work runs beside the creates.
 * `--baseline` then measures the raw baseline (bench/BaselineServer.ts, one INSERT per create) the same way, on a
 * database of its own: its process's and its backends' CPU per create beside the server's. On a machine whose
 * cores the server, Postgres and the load generator share, the rate follows the sum of the two, so this says what
 * a ratio of 1.0 would ask of each.
 * `--profile=<dir>` writes a profile of each measured run (and of the work it set off, until the server is idle
 * again) to `<dir>`: of the CPU, or with `--profile-kind=heap` of the allocations, or with
 * `--profile-kind=survivors` of the allocations that outlived a young-generation collection
 * (bench/ProfileOnSignal.mjs). The server runs compiled, as `npm start` runs it; read the profile with
 * bench/profileSums.mjs, whose `--modules` names the source file of each line of the compiled server.
 * `--durations` logs each statement's duration instead (`log_min_duration_statement = 0`) and prints beside each
 * kind of statement the milliseconds per create the database spent on it (parse, bind and execute summed: time
 * in the backend, waits for locks and the log's flush included, not CPU alone).
 * Reading the Postgres log needs access to it (BENCH_PG_LOG, default the Debian path of Postgres 15).
 */
import { randomBytes } from "node:crypto"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import pg from "pg"
import { percentile } from "./Report.ts"
import {
  freshDatabase,
  processesCpuMillis,
  processGroupPids,
  startBaseline,
  startBundledServer
} from "./ServerProcess.ts"
import { benchServerEnv, fireCreates, newOperatorKeys, setUpBenchData } from "./Setup.ts"

const root = resolve(import.meta.dirname, "..")
const option = (name: string) =>
  process.argv.find((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`))?.split("=")[1] ?? undefined
const creates = Number(option("creates") ?? "1000")
const hubDown = process.argv.includes("--hub-down")
const withBaseline = process.argv.includes("--baseline")
const durations = process.argv.includes("--durations")
const profileDir = option("profile")
const profileKind = option("profile-kind") ?? "cpu"
if (!["cpu", "heap", "survivors"].includes(profileKind)) throw new Error("--profile-kind is cpu, heap or survivors")
if (profileDir !== undefined) mkdirSync(resolve(profileDir), { recursive: true })
const logPath = process.env["BENCH_PG_LOG"] ?? "/var/log/postgresql/postgresql-15-main.log"
const databaseUrl = process.env["DATABASE_URL"]
if (databaseUrl === undefined) throw new Error("DATABASE_URL is needed")

/**
 * The CPU milliseconds used so far by a served process's group (`group`) and by the Postgres backends serving
 * `database`, both as they are now: read it before and after a run.
 */
const cpuOf = async (admin: pg.Client, group: number, database: string) => {
  const processes = processGroupPids(group)
  const backends = (await admin.query(`SELECT pid FROM pg_stat_activity WHERE datname = $1`, [database])).rows.map(
    (row: { pid: number }) => row.pid
  )
  return () => ({ process: processesCpuMillis(processes), db: processesCpuMillis(backends) })
}

const main = async () => {
  const dir = mkdtempSync(join(tmpdir(), "hitl-create-cost-"))
  const database = await freshDatabase(databaseUrl, "createcost")
  const name = new URL(database.url).pathname.slice(1)
  const admin = new pg.Client({ connectionString: databaseUrl })
  await admin.connect()
  await admin.query(
    durations
      ? `ALTER DATABASE ${name} SET log_min_duration_statement = 0`
      : `ALTER DATABASE ${name} SET log_statement = 'all'`
  )
  const keys = newOperatorKeys()
  const server = await startBundledServer({
    cwd: root,
    logFile: join(dir, "server.log"),
    command:
      profileDir === undefined
        ? undefined
        : {
            command: process.execPath,
            args: ["--import", "./bench/ProfileOnSignal.mjs", "scripts/start.mjs"]
          },
    env: benchServerEnv({
      dir,
      databaseUrl: database.url,
      keys,
      extra: {
        ...(hubDown ? { HUB_URL: "http://127.0.0.1:9" } : {}),
        ...(profileDir === undefined ? {} : { PROFILE_DIR: resolve(profileDir), PROFILE_KIND: profileKind })
      }
    })
  })
  try {
    const data = await setUpBenchData(server, keys)
    const run = randomBytes(6).toString("hex")
    const fire = (connections: number, amount: number) =>
      fireCreates({
        origin: server.decisions,
        callerKey: data.callerKey,
        keyPrefix: `cost-${run}`,
        connections,
        amount
      })
    const totals = new Map<number, number>()
    for (const connections of [1, 32]) {
      await fire(connections, Math.max(200, connections * 20))
      const cpu = await cpuOf(admin, server.child.pid!, name)
      const logFrom = statSync(logPath).size
      const before = cpu()
      // SIGWINCH starts the profile and the next one writes it (bench/ProfileOnSignal.mjs).
      if (profileDir !== undefined) process.kill(server.child.pid!, "SIGWINCH")
      const result = await fire(connections, creates)
      // The work the creates set off runs on a little after the last answer: the passes begin 20 ms apart.
      await new Promise((resolve) => setTimeout(resolve, 200))
      if (profileDir !== undefined) process.kill(server.child.pid!, "SIGWINCH")
      const after = cpu()
      const log = readFileSync(logPath).subarray(logFrom).toString("utf8")
      const lines = log.split("\n")
      const kinds = new Map<string, number>()
      const spent = new Map<string, number>()
      let statements = 0
      lines.forEach((line, i) => {
        if (!line.includes(`@${name} LOG:  `)) return
        const logged = /LOG: {2}(?:duration: ([\d.]+) ms {2})?(statement|execute|parse|bind)\b[^:]*: (.*)$/.exec(line)
        if (logged === null) return
        // A statement of several lines goes on below its log line: name it by its first words.
        let text = logged[3]!.trim()
        for (let j = i + 1; text === "" && j < lines.length && !/^\d{4}-/.test(lines[j]!); j++) text = lines[j]!.trim()
        text = text.replace(/\s+/g, " ").slice(0, 70)
        if (logged[1] !== undefined) spent.set(text, (spent.get(text) ?? 0) + Number(logged[1]))
        if (logged[2] !== "statement" && logged[2] !== "execute") return
        statements++
        kinds.set(text, (kinds.get(text) ?? 0) + 1)
      })
      process.stdout.write(
        `\n${connections} connection(s), ${creates} creates${hubDown ? " (hub unreachable)" : ""}: ` +
          `p50 ${percentile(result.latencies, 50).toFixed(2)} ms, ${(creates / result.seconds).toFixed(0)} req/s, ` +
          `non-201 ${result.bad}; server CPU ${((after.process - before.process) / creates).toFixed(2)} ms/create, ` +
          `backends ${((after.db - before.db) / creates).toFixed(2)} ms/create; ` +
          `${(statements / creates).toFixed(2)} statements/create\n`
      )
      for (const [text, count] of [...kinds].sort((a, b) => b[1] - a[1]).slice(0, 14)) {
        const ms = spent.get(text)
        process.stdout.write(
          `  ${(count / creates).toFixed(2)}  ${ms === undefined ? "" : `${(ms / creates).toFixed(3)} ms  `}${text}\n`
        )
      }
      totals.set(connections, (after.process - before.process + after.db - before.db) / creates)
    }
    if (withBaseline) await measureBaseline(data.orgId, totals)
  } finally {
    await server.stop()
    await admin.end()
    await database.drop()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The raw baseline's CPU per create, process and backends, at one connection and 32, beside the server's sums. */
const measureBaseline = async (orgId: string, serverTotals: ReadonlyMap<number, number>) => {
  const dir = mkdtempSync(join(tmpdir(), "hitl-create-cost-baseline-"))
  const database = await freshDatabase(databaseUrl, "createcostraw")
  const name = new URL(database.url).pathname.slice(1)
  const baseline = await startBaseline({
    cwd: root,
    logFile: join(dir, "baseline.log"),
    env: { BASELINE_DATABASE_URL: database.url, BASELINE_SCHEMA: "raw" }
  })
  const admin = new pg.Client({ connectionString: databaseUrl })
  await admin.connect()
  try {
    const fire = (connections: number, amount: number) =>
      fireCreates({
        origin: baseline.origin,
        path: `/decisions?org=${orgId}`,
        callerKey: "",
        keyPrefix: "raw",
        connections,
        amount
      })
    for (const connections of [1, 32]) {
      await fire(connections, Math.max(200, connections * 20))
      const cpu = await cpuOf(admin, baseline.child.pid!, name)
      const before = cpu()
      const result = await fire(connections, creates)
      const after = cpu()
      if (result.bad > 0) throw new Error(`the baseline answered ${result.bad} creates with a status other than 201`)
      const processMs = (after.process - before.process) / creates
      const dbMs = (after.db - before.db) / creates
      const server = serverTotals.get(connections)
      process.stdout.write(
        `\nbaseline, ${connections} connection(s), ${creates} creates: p50 ${percentile(result.latencies, 50).toFixed(2)} ms, ` +
          `${(creates / result.seconds).toFixed(0)} req/s; process CPU ${processMs.toFixed(2)} ms/create, ` +
          `backends ${dbMs.toFixed(2)} ms/create; sum ${(processMs + dbMs).toFixed(2)} ms` +
          (server === undefined
            ? ""
            : ` against the server's ${server.toFixed(2)} (${((processMs + dbMs) / server).toFixed(2)} of it)`) +
          "\n"
      )
    }
  } finally {
    await baseline.stop()
    await admin.end()
    await database.drop()
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
