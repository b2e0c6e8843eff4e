/**
 * What one event ingest costs on a Postgres server, in figures that hold on a shared machine: the server's
 * CPU time per event (its process group) and that of the database backends serving it (from /proc), over a
 * fixed number of signed events at a given concurrency, the processing after the answer included (each run
 * waits until no event is left to process); with `--stmts`, the statements per event, counted in the Postgres
 * log of a database of this run's own. Each round measures the server, then the baseline
 * (bench/BaselineServer.ts) unless `--no-baseline`.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/ingestCost.ts [--n=4000] [--conns=32]
 *     [--rounds=3] [--notify] [--stmts] [--no-baseline] [--profile]
 *
 * `--notify` sends a notification type (filed for a hub user, with its deliveries) instead of the benchmark's
 * plain type. `--profile` runs the server under `node --cpu-prof` (the profile is left in the run's directory,
 * printed at the end). Reading the Postgres log needs access to it (BENCH_PG_LOG, default the Debian path of
 * Postgres 15).
 */
import autocannon from "autocannon"
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import pg from "pg"
import { seedBaseline } from "../bench/Paths.ts"
import {
  freshDatabase,
  processGroupCpuSeconds,
  processesCpuMillis,
  startBaseline,
  startBundledServer
} from "../bench/ServerProcess.ts"
import { benchServerEnv, newOperatorKeys, producerId, setUpBenchData, signedEvent } from "../bench/Setup.ts"

const root = resolve(import.meta.dirname, "..")
const args = process.argv.slice(2)
const opt = (name: string, dflt: string) =>
  args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? (args.includes(`--${name}`) ? "1" : dflt)
const n = Number(opt("n", "4000"))
const conns = Number(opt("conns", "32"))
const rounds = Number(opt("rounds", "3"))
const notify = opt("notify", "") !== ""
const profile = opt("profile", "") !== ""
const stmts = opt("stmts", "") !== ""
const logFile = process.env["BENCH_PG_LOG"] ?? "/var/log/postgresql/postgresql-15-main.log"
const skipBaseline = opt("no-baseline", "") !== ""
const databaseUrl = process.env["DATABASE_URL"]
if (databaseUrl === undefined) throw new Error("DATABASE_URL is needed")

const eventType = notify ? `${producerId}.notification.created` : `${producerId}.report.generated`
const signed = (path: string, key: string) => signedEvent(path, key, eventType)

const fire = (origin: string, path: string, key: string, amount: number, connections: number) =>
  new Promise<{ non2xx: number; seconds: number }>((ok, fail) => {
    const started = performance.now()
    autocannon(
      {
        url: origin,
        connections,
        amount,
        timeout: 30,
        requests: [
          {
            method: "POST",
            path,
            setupRequest: (request) => {
              const s = signed(path, key)
              return { ...request, method: s.method, path: s.path, headers: { ...s.headers }, body: s.body }
            }
          }
        ]
      },
      (error, result) =>
        error
          ? fail(error)
          : ok({ non2xx: result.non2xx + result.errors, seconds: (performance.now() - started) / 1000 })
    )
  })

const main = async () => {
  const dir = mkdtempSync(join(tmpdir(), "ingest-cost-"))
  const database = await freshDatabase(databaseUrl, "benchingest")
  const keys = newOperatorKeys()
  const dbName = new URL(database.url).pathname.slice(1)
  if (stmts) {
    const admin = new pg.Client({ connectionString: databaseUrl })
    await admin.connect()
    await admin.query(`ALTER DATABASE ${dbName} SET log_min_duration_statement = 0`)
    await admin.end()
  }
  const server = await startBundledServer({
    cwd: root,
    logFile: join(dir, "server.log"),
    command: profile
      ? {
          command: process.execPath,
          args: ["--cpu-prof", `--cpu-prof-dir=${join(dir, "profile")}`, "scripts/start.mjs"]
        }
      : undefined,
    env: benchServerEnv({ dir, databaseUrl: database.url, keys })
  })
  const client = new pg.Client({ connectionString: database.url })
  await client.connect()
  const backends = async () =>
    (
      await client.query<{ pid: number }>(
        "select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()"
      )
    ).rows.map((r) => r.pid)
  try {
    const data = await setUpBenchData(server, keys)
    if (notify) {
      const r = await fetch(`${server.hub}/api/v1/admin/event-catalog`, {
        method: "POST",
        headers: { authorization: `Bearer ${keys.hubAdminKey}`, "content-type": "application/json" },
        body: JSON.stringify({
          type: eventType,
          producer: producerId,
          isNotification: true,
          dataSchema: { type: "object", required: ["title"], properties: { title: { type: "string" } } }
        })
      })
      if (!r.ok) throw new Error(`catalog: ${r.status} ${await r.text()}`)
    }
    const baseline = skipBaseline
      ? undefined
      : await startBaseline({
          cwd: root,
          logFile: join(dir, "baseline.log"),
          env: { BASELINE_SIGNING_KEY: data.signingKey, BASELINE_DATABASE_URL: database.url, BASELINE_SCHEMA: "raw" }
        })
    if (baseline !== undefined) await seedBaseline(baseline.origin, data)
    const serverPgid = server.child.pid!
    const settle = () => new Promise((r) => setTimeout(r, 1500))
    const measure = async (label: string, origin: string, path: string, pgid: number) => {
      await fire(origin, path, data.signingKey, Math.max(conns * 20, 500), conns) // warm-up
      await settle()
      const before = new Map((await backends()).map((pid) => [pid, processesCpuMillis([pid])]))
      const logStart = stmts ? statSync(logFile).size : 0
      const c0 = processGroupCpuSeconds(pgid) * 1000
      const result = await fire(origin, path, data.signingKey, n, conns)
      await settle() // the processing after the answer
      const drainStart = performance.now()
      while (performance.now() - drainStart < 120_000) {
        const left = await client.query<{ n: string }>("select count(*) as n from hub.events where status = 'accepted'")
        if (Number(left.rows[0]!.n) === 0) break
        await new Promise((r) => setTimeout(r, 250))
      }
      const drained = (performance.now() - drainStart) / 1000
      process.stdout.write(`drained after ${drained.toFixed(1)} s more\n`)
      const c1 = processGroupCpuSeconds(pgid) * 1000
      if (stmts) {
        const fd = openSync(logFile, "r")
        const size = statSync(logFile).size
        const buf = Buffer.alloc(size - logStart)
        readSync(fd, buf, 0, buf.length, logStart)
        closeSync(fd)
        const counts = new Map<string, number>()
        const entries: Array<string> = []
        for (const line of buf.toString("utf8").split("\n")) {
          if (/^\d{4}-\d\d-\d\d /.test(line)) entries.push(line)
          else if (entries.length > 0) entries[entries.length - 1] += " " + line
        }
        for (const line of entries) {
          if (!line.includes(`@${dbName} `)) continue
          const m = /(?:statement|execute [^:]*): (.*)$/s.exec(line)
          if (m === null) continue
          const key = m[1]!.replace(/\s+/g, " ").slice(0, 90)
          counts.set(key, (counts.get(key) ?? 0) + 1)
        }
        const all = [...counts.values()].reduce((a, b) => a + b, 0)
        process.stdout.write(`statements: ${all} (${(all / n).toFixed(3)} per event)\n`)
        for (const [k, v] of [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
          process.stdout.write(`  ${String(v).padStart(6)} ${(v / n).toFixed(3)}  ${k}\n`)
        }
      }
      const after = await backends()
      const p1 = after.reduce((sum, pid) => sum + processesCpuMillis([pid]) - (before.get(pid) ?? 0), 0)
      process.stdout.write(
        `${label.padEnd(9)} conns=${conns} n=${n} rate=${(n / result.seconds).toFixed(0)}/s non2xx=${result.non2xx} ` +
          `cpu/event: process ${((c1 - c0) / n).toFixed(3)} ms, postgres ${(p1 / n).toFixed(3)} ms\n`
      )
    }
    for (let round = 0; round < rounds; round++) {
      await measure("server", server.hub, "/api/webhooks/events", serverPgid)
      if (baseline !== undefined) await measure("baseline", baseline.origin, "/events", baseline.child.pid!)
    }
    process.stdout.write(`load: ${readFileSync("/proc/loadavg", "utf8")}`)
    if (baseline !== undefined) await baseline.stop()
  } finally {
    await client.end()
    await server.stop()
    await database.drop()
    process.stdout.write(`dir: ${dir}\n`)
  }
}

await main()
