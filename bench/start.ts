/**
 * How long `npm start` takes to three ready services: from spawning `npm start` (whatever it runs, a prestart
 * included) until `/api/v1/ready` answers 200 on the hub, decisions and task inbox ports. Each database kind
 * is measured a few times: the first run starts on nothing (an empty DATA_DIR, or a new empty database on the
 * Postgres server of DATABASE_URL, dropped afterwards), the next ones restart on the data the first left.
 * Before the runs the server is compiled if its sources changed (timed apart, `compileMillis`), so a run
 * times a start rather than a compile.
 *
 * `npx tsx bench/start.ts [--runs=N] [--db=embedded|postgres] [--at=<commit>] [--command="..."]` prints the
 * figures; `measureStart` answers them. `--at` times a copy of that commit (`snapshotAt`): other work in the
 * tree then cannot recompile the server in the middle of the runs. Speed is measured here, never asserted in tests. On a shared machine the figures are noisy.
 */
import { spawn, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { freshDatabase } from "./ServerProcess.ts"

export type StartDatabase = "embedded" | "postgres"

export interface StartRun {
  /** `fresh`: no data yet (migrations applied, secrets generated); `restart`: the data of the run before. */
  readonly kind: "fresh" | "restart"
  /** From spawning `npm start` to all three `/api/v1/ready` answering 200. */
  readonly readyMillis: number
  /**
   * CPU time (user and system) the start's processes had used when the three answered ready: steadier than
   * `readyMillis` on a machine others share. Read from /proc; undefined elsewhere.
   */
  readonly cpuMillis?: number | undefined
}

export interface StartFigures {
  readonly database: StartDatabase
  /**
   * What compiling the server cost before the runs (`node scripts/start.mjs --compile-only`): about a second
   * after the sources or dependencies changed, a few more when the migrations changed too (the embedded
   * database image a fresh start copies is made then), a fingerprint check otherwise. `npm install` pays it
   * ahead.
   */
  readonly compileMillis: number
  readonly runs: ReadonlyArray<StartRun>
  /** The median of the restarts (the usual start), or of every run when there is only one. */
  readonly medianMillis: number
}

export interface StartOptions {
  /** Runs per database, the first fresh. Default 4. */
  readonly runs?: number | undefined
  /** The databases to measure; Postgres only when `databaseUrl` is given. Default both that can run. */
  readonly databases?: ReadonlyArray<StartDatabase> | undefined
  /** A Postgres server: each measurement gets a database of its own there, dropped afterwards. */
  readonly databaseUrl?: string | undefined
  /** The checkout to start. Default this repository. */
  readonly cwd?: string | undefined
  /** What to time instead of `npm start`, e.g. `["npx", "tsx", "apps/server/main.ts"]` (a before/after). */
  readonly command?: ReadonlyArray<string> | undefined
}

const root = resolve(import.meta.dirname, "..")

const freePort = () =>
  new Promise<number>((resolvePort, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolvePort(address.port) : reject()))
    })
  })

const secret = () => randomBytes(24).toString("hex")

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

const isReady = (url: string) =>
  fetch(url).then(
    async (response) => (await response.arrayBuffer(), response.status === 200),
    () => false
  )

/**
 * CPU time of every live process in the process group `group`, with the children each has waited for (so an
 * image maker or compiler that ran and exited counts too), from /proc. Undefined where there is no /proc.
 */
const groupCpuMillis = (group: number): number | undefined => {
  if (!existsSync("/proc/self/stat")) return undefined
  let ticks = 0
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8")
    } catch {
      continue
    }
    // After the command's closing parenthesis: state, ppid, pgrp, ..., utime (14), stime, cutime, cstime.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    if (Number(fields[2]) !== group) continue
    ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])
  }
  // Linux counts in clock ticks of 1/100 s (USER_HZ).
  return ticks * 10
}

const groupAlive = (group: number) => {
  try {
    process.kill(-group, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** The end of the server's log, for a failed run (its directory is removed afterwards). */
const logTail = (logFile: string) => readFileSync(logFile, "utf8").split("\n").slice(-40).join("\n")

/** One `npm start` in a process group of its own, timed until all three services are ready, then stopped. */
const timeOneStart = async (
  cwd: string,
  command: ReadonlyArray<string>,
  env: Record<string, string>,
  logFile: string
) => {
  const ports = [await freePort(), await freePort(), await freePort()] as const
  const log = openSync(logFile, "a")
  const started = performance.now()
  const child = spawn(command[0]!, command.slice(1), {
    cwd,
    env: {
      PATH: process.env["PATH"],
      HOME: process.env["HOME"],
      HUB_PORT: String(ports[0]),
      DECISIONS_PORT: String(ports[1]),
      TASKS_PORT: String(ports[2]),
      ...env
    },
    stdio: ["ignore", log, log],
    detached: true
  })
  closeSync(log)
  const exited = new Promise<void>((done) => child.once("exit", () => done()))
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, name)
    } catch {
      // already gone
    }
  }
  try {
    const pending = new Set(ports.map((port) => `http://127.0.0.1:${port}/api/v1/ready`))
    const deadline = started + 120_000
    while (pending.size > 0) {
      if (child.exitCode !== null) throw new Error(`npm start exited early:\n${logTail(logFile)}`)
      if (performance.now() > deadline) throw new Error(`not ready within 120 s:\n${logTail(logFile)}`)
      for (const url of Array.from(pending)) if (await isReady(url)) pending.delete(url)
      if (pending.size > 0) await new Promise((wake) => setTimeout(wake, 20))
    }
    const readyMillis = Math.round(performance.now() - started)
    return { readyMillis, cpuMillis: groupCpuMillis(child.pid!) }
  } finally {
    signal("SIGTERM")
    const timer = setTimeout(() => signal("SIGKILL"), 15_000)
    await exited
    // npm may exit before the server it started has closed its database: the next run would find the data
    // directory still locked. Wait until no process of the group is left.
    while (groupAlive(child.pid!)) await new Promise((wake) => setTimeout(wake, 20))
    clearTimeout(timer)
  }
}

/** Compiles the server when its sources changed, so the runs time starts rather than one compile. */
const compileServer = (cwd: string) => {
  const started = performance.now()
  const result = spawnSync(process.execPath, ["scripts/start.mjs", "--compile-only"], { cwd, encoding: "utf8" })
  if (result.status !== 0) throw new Error(`compiling the server failed:\n${result.stderr}`)
  return Math.round(performance.now() - started)
}

const measureOne = async (database: StartDatabase, options: StartOptions): Promise<StartFigures> => {
  const dir = mkdtempSync(join(tmpdir(), `hitl-bench-start-${database}-`))
  const fresh = database === "postgres" ? await freshDatabase(options.databaseUrl!, "bench_start") : undefined
  const env: Record<string, string> = {
    DATA_DIR: join(dir, "data"),
    LOG_FORMAT: "json",
    ...(fresh === undefined ? {} : { DATABASE_URL: fresh.url }),
    HUB_ADMIN_KEY: secret(),
    HUB_SECRETS_KEY: secret(),
    DECISIONS_API_KEY: secret(),
    DECISIONS_EMBED_KEY: secret(),
    DECISIONS_SECRETS_KEY: secret(),
    TASKS_API_KEY: secret(),
    TASKS_SIGNING_KEY: secret(),
    TASKS_SECRETS_KEY: secret()
  }
  const runs: Array<StartRun> = []
  let compileMillis = 0
  try {
    // An older commit may have nothing to compile ahead (its npm start compiled at every start).
    const compiles = options.command === undefined && existsSync(join(options.cwd ?? root, "scripts", "start.mjs"))
    compileMillis = compiles ? compileServer(options.cwd ?? root) : 0
    for (let index = 0; index < (options.runs ?? 4); index++) {
      const { readyMillis, cpuMillis } = await timeOneStart(
        options.cwd ?? root,
        options.command ?? ["npm", "start", "--silent"],
        env,
        join(dir, "server.log")
      )
      runs.push({ kind: index === 0 ? "fresh" : "restart", readyMillis, cpuMillis })
    }
  } finally {
    await fresh?.drop()
    rmSync(dir, { recursive: true, force: true })
  }
  const restarts = runs.filter((run) => run.kind === "restart").map((run) => run.readyMillis)
  return {
    database,
    compileMillis,
    runs,
    medianMillis: median(restarts.length > 0 ? restarts : runs.map((run) => run.readyMillis))
  }
}

/** Measures `npm start` to ready on each database, one after the other (never two servers at once). */
export const measureStart = async (options: StartOptions = {}): Promise<ReadonlyArray<StartFigures>> => {
  const wanted = options.databases ?? ["embedded", "postgres"]
  const databases = wanted.filter((kind) => kind === "embedded" || (options.databaseUrl ?? "") !== "")
  if (wanted.includes("postgres") && options.databases !== undefined && !databases.includes("postgres")) {
    throw new Error("measuring Postgres needs a databaseUrl (DATABASE_URL)")
  }
  const figures: Array<StartFigures> = []
  for (const database of databases) figures.push(await measureOne(database, options))
  return figures
}

export const formatStart = (figures: ReadonlyArray<StartFigures>) =>
  figures
    .map(
      (figure) =>
        `${figure.database.padEnd(9)} median restart ${String(figure.medianMillis).padStart(6)} ms   ` +
        `(compile ${figure.compileMillis} ms)   runs: ` +
        figure.runs
          .map(
            (run) =>
              `${run.kind} ${run.readyMillis} ms${run.cpuMillis === undefined ? "" : ` (cpu ${run.cpuMillis} ms)`}`
          )
          .join(", ")
    )
    .join("\n")

/**
 * A copy of the repository at `commit` (its files, this checkout's node_modules linked in), so the figures
 * are of one fixed version while the working tree changes, and an older commit can be timed beside it.
 */
export const snapshotAt = (commit: string) => {
  const dir = mkdtempSync(join(tmpdir(), "hitl-bench-start-tree-"))
  const archive = spawnSync("git", ["archive", "--format=tar", commit], { cwd: root, maxBuffer: 1 << 30 })
  if (archive.status !== 0) throw new Error(`git archive ${commit} failed: ${archive.stderr}`)
  const unpack = spawnSync("tar", ["-x", "-C", dir], { input: archive.stdout })
  if (unpack.status !== 0) throw new Error(`unpacking ${commit} failed: ${unpack.stderr}`)
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"))
  return { cwd: dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const args = process.argv.slice(2)
  const option = (name: string) => args.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3)
  const db = option("db")
  const at = option("at")
  const snapshot = at === undefined ? undefined : snapshotAt(at)
  try {
    const figures = await measureStart({
      runs: option("runs") === undefined ? undefined : Number(option("runs")),
      databases: db === undefined ? undefined : [db as StartDatabase],
      databaseUrl: process.env["DATABASE_URL"],
      command: option("command")?.split(" "),
      cwd: snapshot?.cwd
    })
    process.stdout.write(`${formatStart(figures)}\n`)
  } finally {
    snapshot?.remove()
  }
}
