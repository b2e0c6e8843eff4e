/**
 * Decision creates on two versions of the server at once, in alternating bursts, so that whatever else the
 * machine is doing weighs on both alike: each runs from its own checkout (`npm start` there) on a Postgres
 * database of its own, gets the same data, and then takes turns with the other, a burst of creates each,
 * for a number of rounds, at one connection and then at 32. Printed per side: p50 over all its answers, and
 * the CPU time per create of its processes and of its database backends (from /proc).
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/createPaired.ts <other checkout> [--rounds=8] [--burst=200] [--hub-down]
 *   npx tsx bench/createPaired.ts <other checkout> --embedded [...]
 *
 * `--embedded` runs each side on the embedded database in a data directory of its own instead (the database then
 * runs inside the server's process: its CPU is the server's, and no backends are counted).
 *
 * The other checkout needs its node_modules; this one is the second side.
 */
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import pg from "pg"
import { percentile } from "./Report.ts"
import {
  type BundledServer,
  freshDatabase,
  processCpuMillis,
  processGroupPids,
  startBundledServer
} from "./ServerProcess.ts"
import { benchServerEnv, fireCreates, newOperatorKeys, setUpBenchData } from "./Setup.ts"

const option = (name: string) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.split("=")[1] ?? undefined
const other = process.argv.slice(2).find((arg) => !arg.startsWith("--"))
if (other === undefined) throw new Error("name the other checkout")
const rounds = Number(option("rounds") ?? "8")
const burst = Number(option("burst") ?? "200")
const hubDown = process.argv.includes("--hub-down")
const embedded = process.argv.includes("--embedded")
const databaseUrl = process.env["DATABASE_URL"]
if (databaseUrl === undefined && !embedded) throw new Error("DATABASE_URL is needed, or --embedded")

interface Side {
  readonly name: string
  readonly server: BundledServer
  readonly callerKey: string
  /** The Postgres database's name; none on the embedded database. */
  readonly database: string | undefined
  readonly drop: () => Promise<void>
  readonly dir: string
}

const admin = databaseUrl === undefined || embedded ? undefined : new pg.Client({ connectionString: databaseUrl })
await admin?.connect()

const startSide = async (name: string, root: string): Promise<Side> => {
  const dir = mkdtempSync(join(tmpdir(), "hitl-create-paired-"))
  const database = databaseUrl === undefined || embedded ? undefined : await freshDatabase(databaseUrl, "createpaired")
  const keys = newOperatorKeys()
  const server = await startBundledServer({
    cwd: root,
    logFile: join(dir, "server.log"),
    env: benchServerEnv({
      dir,
      databaseUrl: database?.url,
      keys,
      extra: hubDown ? { HUB_URL: "http://127.0.0.1:9" } : {}
    })
  })
  const data = await setUpBenchData(server, keys)
  return {
    name,
    server,
    callerKey: data.callerKey,
    database: database === undefined ? undefined : new URL(database.url).pathname.slice(1),
    drop: database?.drop ?? (() => Promise.resolve()),
    dir
  }
}

const run = randomBytes(6).toString("hex")
const fire = async (side: Side, connections: number, amount: number) => {
  const result = await fireCreates({
    origin: side.server.decisions,
    callerKey: side.callerKey,
    keyPrefix: `paired-${run}`,
    connections,
    amount
  })
  if (result.bad > 0) throw new Error(`${side.name} answered ${result.bad} creates with a status other than 201`)
  return Array.from(result.latencies)
}

const sides = [await startSide("other", resolve(other)), await startSide("this", resolve(import.meta.dirname, ".."))]
try {
  for (const connections of [1, 32]) {
    const totals = sides.map(() => ({ latencies: [] as Array<number>, server: 0, db: 0, creates: 0 }))
    for (const side of sides) await fire(side, connections, Math.max(200, connections * 20))
    for (let round = 0; round < rounds; round++) {
      for (const [i, side] of sides.entries()) {
        const serverPids = processGroupPids(side.server.child.pid!)
        const pgPids =
          admin === undefined
            ? []
            : (await admin.query(`SELECT pid FROM pg_stat_activity WHERE datname = $1`, [side.database])).rows.map(
                (row: { pid: number }) => row.pid
              )
        const cpu = () => ({
          server: serverPids.reduce((sum, pid) => sum + processCpuMillis(pid), 0),
          db: pgPids.reduce((sum: number, pid: number) => sum + processCpuMillis(pid), 0)
        })
        const before = cpu()
        const latencies = await fire(side, connections, burst)
        const after = cpu()
        const total = totals[i]!
        total.latencies.push(...latencies)
        total.server += after.server - before.server
        total.db += after.db - before.db
        total.creates += burst
      }
    }
    for (const [i, side] of sides.entries()) {
      const total = totals[i]!
      const sorted = Float64Array.from(total.latencies).sort()
      process.stdout.write(
        `${side.name.padEnd(6)} ${String(connections).padStart(2)} conn: p50 ${percentile(sorted, 50).toFixed(2)} ms, ` +
          `p99 ${percentile(sorted, 99).toFixed(1)} ms; server CPU ${(total.server / total.creates).toFixed(2)} ms/create, ` +
          `backends ${(total.db / total.creates).toFixed(2)} ms/create (${total.creates} creates)\n`
      )
    }
  }
} finally {
  for (const side of sides) {
    await side.server.stop()
    await side.drop()
    rmSync(side.dir, { recursive: true, force: true })
  }
  await admin?.end()
}
