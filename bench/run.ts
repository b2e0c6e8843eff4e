/**
 * `npm run bench`: the bundled server, started as `npm start` starts it, driven over HTTP by autocannon on
 * each hot path, beside a raw baseline (plain node:http and one SQL statement per request) on the same kind
 * of database. Runs on the embedded database (a temporary DATA_DIR) and, when DATABASE_URL is set, on a fresh
 * database of that Postgres server, dropped afterwards. Prints one table, writes it to bench/results/ as JSON
 * and markdown, and fails when any answer was not 2xx. Speed is measured here, never asserted in tests.
 *
 * Options: `--db=embedded|postgres`, `--only=<path>,<path>` (names as in the table), `--connections=32,1`,
 * `--quick` (short runs, to check the harness), `--only=airtable` (only bench/airtable.ts: the task inbox on the
 * Airtable stand-in; `--only=longpoll` and `--only=start` likewise run only their script), `--no-micro`,
 * `--profile` (the server runs from its TypeScript sources and each measured run of the server is profiled
 * alone: where its CPU time went, by layer of the request stack with the time per request of each, by place
 * and by function, is printed and written to bench/results/ beside the profile; profiling slows the server,
 * so its figures are not comparable: `npm run bench -- --profile --only=<path> --connections=32` for one
 * path); BENCH_SECONDS and
 * BENCH_WARMUP_SECONDS set the measured and warm-up time of each run (default 3 and 1).
 */

import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync
} from "node:fs"
import { availableParallelism, tmpdir, totalmem } from "node:os"
import { join, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { drive, type LoadOptions } from "./Load.ts"
import { microBenchmarks } from "./Micro.ts"
import { summarize, summaryText, type CpuProfile } from "./Profile.ts"
import { benchPaths, seedBaseline } from "./Paths.ts"
import {
  asExtraFigures,
  failedRuns,
  machineLine,
  markdownTable,
  textTable,
  type ExtraFigure,
  type Machine,
  type Report,
  type Row
} from "./Report.ts"
import { freshDatabase, startBaseline, startBundledServer, type ChildService } from "./ServerProcess.ts"
import { benchServerEnv, newOperatorKeys, setUpBenchData } from "./Setup.ts"

const root = resolve(import.meta.dirname, "..")
const args = process.argv.slice(2)
const option = (name: string) =>
  args.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3) ??
  (args.includes(`--${name}`) ? "" : undefined)
const quick = option("quick") !== undefined
const profile = option("profile") !== undefined
const seconds = Number(process.env["BENCH_SECONDS"] ?? (quick ? 1 : 3))
const warmupSeconds = Number(process.env["BENCH_WARMUP_SECONDS"] ?? (quick ? 0.5 : 1))
const connectionCounts = (option("connections") ?? "32,1").split(",").map(Number)
const only = option("only")
  ?.split(",")
  .map((name) => name.trim())
  .filter((name) => name !== "")
const databaseUrl = process.env["DATABASE_URL"]
const databases = (["embedded", "postgres"] as const).filter(
  (kind) =>
    (option("db") === undefined || option("db") === kind) &&
    (kind === "embedded" || (databaseUrl !== undefined && databaseUrl !== ""))
)
if (option("db") === "postgres" && databases.length === 0) throw new Error("--db=postgres needs DATABASE_URL")

const resultsDir = join(root, "bench", "results")

/** The scripts whose figures are shown under the table (see `pluggedIn`), by the names `--only` knows them by. */
const scripts = ["longpoll", "start", "airtable"] as const
/** `--only` naming scripts alone: only they run, no path of the table. */
const onlyScripts = only !== undefined && only.every((name) => (scripts as ReadonlyArray<string>).includes(name))

const benchDatabase = async (kind: "embedded" | "postgres", load: ReadonlyArray<LoadOptions>) => {
  const dir = mkdtempSync(join(tmpdir(), `hitl-bench-${kind}-`))
  const cleanups: Array<() => Promise<void>> = []
  const rows: Array<Row> = []
  let failed = false
  try {
    const database = kind === "postgres" ? await freshDatabase(databaseUrl!, "bench") : undefined
    if (database !== undefined) cleanups.push(database.drop)
    const keys = newOperatorKeys()
    process.stdout.write(`\n[${kind}] starting the server (npm start) ...\n`)
    const profileDir = join(dir, "profile")
    const server = await startBundledServer({
      cwd: root,
      logFile: join(dir, "server.log"),
      // Profiled, the server runs from its sources (so each function is named by its file) and profiles each
      // measured run alone, between two signals (bench/ProfileOnSignal.mjs).
      command: profile
        ? {
            command: process.execPath,
            args: ["--import", "./bench/ProfileOnSignal.mjs", "--import", "tsx", "apps/server/main.ts"]
          }
        : undefined,
      env: {
        ...benchServerEnv({ dir, databaseUrl: database?.url, keys }),
        ...(profile ? { PROFILE_DIR: profileDir } : {})
      }
    })
    cleanups.unshift(server.stop)
    const data = await setUpBenchData(server, keys)
    const baseline: ChildService & { readonly origin: string } = await startBaseline({
      cwd: root,
      logFile: join(dir, "baseline.log"),
      env: {
        BASELINE_SIGNING_KEY: data.signingKey,
        ...(database === undefined
          ? { BASELINE_DATA_DIR: join(dir, "baseline-data") }
          : { BASELINE_DATABASE_URL: database.url, BASELINE_SCHEMA: "raw" })
      }
    })
    cleanups.unshift(baseline.stop)
    const seeded = await seedBaseline(baseline.origin, data)
    const paths = await benchPaths(server, { origin: baseline.origin, ...seeded }, data, keys.decisionsApiKey)
    for (const path of paths) {
      if (only !== undefined && !only.includes(path.name)) continue
      for (const options of load) {
        const profiled = profile ? profileWindow(server.child.pid!, profileDir) : undefined
        const serverFigures = await drive(
          { ...path.server, cpuSeconds: server.cpuSeconds, measured: profiled?.measured },
          options
        )
        if (profiled !== undefined) {
          const name = `profile-${kind}-${path.name.replace(/[^a-z0-9]+/gi, "-")}-${options.connections}`
          writeProfileSummary(
            `${kind}: ${path.name} at ${options.connections}`,
            await profiled.file(),
            name,
            serverFigures.requests
          )
        }
        const baselineFigures = await drive({ ...path.baseline, cpuSeconds: baseline.cpuSeconds }, options)
        const row: Row = {
          path: path.name,
          database: kind,
          connections: options.connections,
          server: serverFigures,
          baseline: baselineFigures
        }
        rows.push(row)
        process.stdout.write(`${textTable([row]).split("\n")[2]}\n`)
        for (const failure of failedRuns([row])) {
          failed = true
          process.stdout.write(`  FAILED ${failure}\n`)
        }
      }
    }
    if (failed) process.stdout.write(`[${kind}] answers outside 2xx: the logs are kept in ${dir}\n`)
    return rows
  } catch (error) {
    failed = true
    throw new Error(`[${kind}] ${error instanceof Error ? error.message : String(error)} (logs kept in ${dir})`)
  } finally {
    for (const cleanup of cleanups) await cleanup().catch((error) => process.stderr.write(`cleanup: ${error}\n`))
    if (!failed) rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * The profile of one measured run: `measured` sends the server the signal that starts its profile and, at the
 * end, the one that writes it; `file` waits for that file to be written and answers its path.
 */
const profileWindow = (pid: number, profileDir: string) => {
  mkdirSync(profileDir, { recursive: true })
  const before = new Set(readdirSync(profileDir))
  return {
    measured: (_phase: "start" | "end") => {
      process.kill(pid, "SIGWINCH")
    },
    file: async (): Promise<string> => {
      for (let waited = 0; waited < 30_000; waited += 100) {
        const written = readdirSync(profileDir).find((file) => file.endsWith(".cpuprofile") && !before.has(file))
        // Written in one call once the profiler has stopped; a moment more for the write to finish.
        if (written !== undefined) {
          await new Promise((resolve) => setTimeout(resolve, 200))
          return join(profileDir, written)
        }
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      throw new Error("the server wrote no CPU profile")
    }
  }
}

/**
 * Summarizes a measured run's CPU profile (bench/Profile.ts: self time by layer of the request stack, with
 * the CPU time per request of each, by place and by function) into bench/results/<name>.txt, beside the
 * profile itself, and prints it.
 */
const writeProfileSummary = (title: string, file: string, name: string, requests: number) => {
  const text = summaryText(summarize(JSON.parse(readFileSync(file, "utf8")) as CpuProfile, 20), requests)
  mkdirSync(resultsDir, { recursive: true })
  copyFileSync(file, join(resultsDir, `${name}.cpuprofile`))
  writeFileSync(join(resultsDir, `${name}.txt`), `${text}\n`)
  process.stdout.write(
    `\n[${title}] server CPU profile of the measured run (bench/results/${name}.cpuprofile):\n${text}\n`
  )
}

/**
 * Figures that other scripts measure, shown under the table: bench/longpoll.ts (how soon a waiting caller
 * is woken), bench/start.ts (how long `npm start` takes to three ready services) and bench/airtable.ts (the
 * task inbox on the Airtable stand-in: requests per write, the limit per base, a long list). Each exports a
 * `measure...` function taking `{databaseUrl, databases, runs}` and answering its figures; they are loaded
 * when present, so a missing script shows as "not measured" instead of breaking the benchmark.
 */
const pluggedIn = async (file: string): Promise<ReadonlyArray<ExtraFigure>> => {
  const path = join(root, "bench", file)
  if (!existsSync(path)) return [{ name: file, value: "not measured (the script is not there yet)" }]
  const module: Record<string, unknown> = await import(pathToFileURL(path).href)
  const measure = Object.entries(module).find(
    ([name, value]) => name.startsWith("measure") && typeof value === "function"
  )
  if (measure === undefined) return [{ name: file, value: "not measured (it exports no measure function)" }]
  const figures = await (measure[1] as (options: object) => Promise<unknown>)({
    databaseUrl,
    databases,
    runs: quick ? 2 : 3
  })
  return asExtraFigures(file.replace(/\.ts$/, ""), figures)
}

const machine: Machine = {
  cpus: availableParallelism(),
  memory: `${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
  node: process.version,
  date: new Date().toISOString().slice(0, 16).replace("T", " ") + " UTC"
}

const load = connectionCounts.map((connections) => ({ connections, seconds, warmupSeconds }))
const rows: Array<Row> = []
for (const kind of onlyScripts ? [] : databases) rows.push(...(await benchDatabase(kind, load)))

const extras: Array<ExtraFigure> = []
if (only === undefined || onlyScripts) {
  for (const script of scripts) {
    if (only === undefined || only.includes(script)) extras.push(...(await pluggedIn(`${script}.ts`)))
  }
}
if (option("no-micro") === undefined && only === undefined) {
  for (const micro of await microBenchmarks(quick ? 0.3 : 1)) {
    extras.push({ name: `in-process: ${micro.name}`, value: micro.opsPerSecond.toLocaleString("en"), unit: "ops/s" })
  }
}

const report: Report = { machine, rows, extras }
mkdirSync(resultsDir, { recursive: true })
writeFileSync(join(resultsDir, "latest.json"), JSON.stringify(report, null, 2) + "\n")
writeFileSync(
  join(resultsDir, "latest.md"),
  `${machineLine(machine)}; ${seconds} s per run after ${warmupSeconds} s of warm-up\n\n${markdownTable(rows, extras)}\n`
)
process.stdout.write(
  `\n${machineLine(machine)}; ${seconds} s per run after ${warmupSeconds} s of warm-up\n` +
    `ratio = server req/s / raw req/s\n\n${textTable(rows, extras)}\n\nwritten to bench/results/latest.json and latest.md\n`
)

const failures = failedRuns(rows)
if (failures.length > 0) {
  process.stderr.write(`\nFAILED: answers outside 2xx were measured, so these figures are wrong:\n`)
  for (const failure of failures) process.stderr.write(`  ${failure}\n`)
  process.exitCode = 1
}
