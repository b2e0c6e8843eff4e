/**
 * How far down a decision create can go on the stack the server stands on, measured beside the raw baseline in
 * the same minutes: four servers take turns, a burst of creates at 32 connections each, for a number of rounds,
 * so that whatever else the machine is doing weighs on all of them alike.
 *
 * - `raw`: the baseline of `npm run bench` (plain node:http and the pg client, one INSERT; BaselineServer.ts);
 * - `effect http`: Effect's HTTP router on its Node server, reading the body and answering it, no database
 *   (EffectFloorServer.ts with FLOOR_ANSWER_ONLY);
 * - `effect http+sql`: the same with the baseline's one INSERT through Effect's Postgres client;
 * - `server`: the bundled server's `POST /api/v1/decisions` (`npm start`), every rule of a create included.
 *
 * Printed per server: the rate over its bursts, p50 and p99, its processes' CPU time per create (from /proc),
 * and each figure against the raw baseline's.
 *
 * `--path=get` measures a read instead, a decision's GET by id: the baseline's one SELECT, the same SELECT on
 * Effect's stack (`effect http` answers a decision it holds, without the SELECT), and the server's
 * `GET /api/v1/decisions/{id}` with its caller key.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/floor.ts [--path=create|get] [--rounds=6] [--burst=2000]
 */
import autocannon from "autocannon"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { percentile } from "./Report.ts"
import {
  freePort,
  freshDatabase,
  processCpuMillis,
  processGroupPids,
  spawnService,
  startBaseline,
  startBundledServer,
  waitUntilReady,
  type ChildService
} from "./ServerProcess.ts"
import { benchServerEnv, decisionPayload, fireCreates, newOperatorKeys, setUpBenchData } from "./Setup.ts"

const option = (name: string) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.split("=")[1] ?? undefined
const rounds = Number(option("rounds") ?? "6")
const burst = Number(option("burst") ?? "2000")
const read = (option("path") ?? "create") === "get"
if (!["create", "get"].includes(option("path") ?? "create")) throw new Error("--path is create or get")
const connections = 32
const databaseUrl = process.env["DATABASE_URL"]
if (databaseUrl === undefined) throw new Error("DATABASE_URL is needed")
const root = resolve(import.meta.dirname, "..")

interface Burst {
  readonly latencies: ReadonlyArray<number>
  readonly seconds: number
}

interface Contender {
  readonly name: string
  readonly service: ChildService
  readonly fire: (amount: number) => Promise<Burst>
}

/**
 * `amount` POSTs of the benchmark's decision payload to `origin` + `path` (or, with `get`, GETs of it), over 32
 * connections, each answered 201 (a GET 200).
 */
const firePlain = (
  origin: string,
  path: string,
  amount: number,
  get = false,
  headers: Readonly<Record<string, string>> = {}
) =>
  new Promise<Burst>((done, fail) => {
    const latencies: Array<number> = []
    const ok = get ? 200 : 201
    let bad = 0
    let n = 0
    const started = performance.now()
    let last = started
    const instance = autocannon(
      {
        url: origin,
        connections,
        amount,
        requests: [
          get
            ? { method: "GET", path, headers: { ...headers } }
            : {
                method: "POST",
                path,
                setupRequest: (request) => ({
                  ...request,
                  method: "POST",
                  path,
                  headers: { "content-type": "application/json" },
                  body: decisionPayload(++n)
                })
              }
        ]
      },
      (error) => {
        if (error) return fail(error)
        if (bad > 0) return fail(new Error(`${origin}${path} answered ${bad} requests with a status other than ${ok}`))
        done({ latencies, seconds: (last - started) / 1000 })
      }
    )
    instance.on("response", (_client, status, _bytes, ms) => {
      last = performance.now()
      if (status !== ok) bad++
      latencies.push(ms)
    })
  })

/** Creates one decision at `origin` + `path` and answers its id. */
const createOne = async (origin: string, path: string): Promise<string> => {
  const response = await fetch(`${origin}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: decisionPayload(0)
  })
  if (response.status !== 201) throw new Error(`${origin}${path} answered ${response.status} to a create`)
  return ((await response.json()) as { data: { decision: { id: string } } }).data.decision.id
}

const startFloor = async (
  dir: string,
  url: string,
  answerOnly: boolean
): Promise<ChildService & { origin: string }> => {
  const port = await freePort()
  const service = spawnService(process.execPath, ["--import", "tsx", "bench/EffectFloorServer.ts"], {
    cwd: root,
    logFile: join(dir, `floor-${answerOnly ? "http" : "sql"}.log`),
    env: {
      PATH: process.env["PATH"],
      HOME: process.env["HOME"],
      FLOOR_PORT: String(port),
      FLOOR_DATABASE_URL: url,
      FLOOR_ANSWER_ONLY: answerOnly ? "1" : "0"
    }
  })
  const origin = `http://127.0.0.1:${port}`
  await waitUntilReady(service, [`${origin}/ready`])
  return { ...service, origin }
}

const dir = mkdtempSync(join(tmpdir(), "hitl-floor-"))
const database = await freshDatabase(databaseUrl, "floor")
const contenders: Array<Contender> = []
try {
  const baseline = await startBaseline({
    cwd: root,
    logFile: join(dir, "baseline.log"),
    env: { BASELINE_DATABASE_URL: database.url, BASELINE_SCHEMA: "raw" }
  })
  /** The path to drive on a plain contender: a create, or the GET of a decision it made first. */
  const plainPath = async (origin: string, createPath: string) =>
    read ? `/decisions/${await createOne(origin, createPath)}` : createPath
  const rawPath = await plainPath(baseline.origin, "/decisions?org=org")
  contenders.push({
    name: "raw",
    service: baseline,
    fire: (amount) => firePlain(baseline.origin, rawPath, amount, read)
  })
  const http = await startFloor(dir, database.url, true)
  const httpPath = await plainPath(http.origin, "/decisions")
  contenders.push({
    name: "effect http",
    service: http,
    fire: (amount) => firePlain(http.origin, httpPath, amount, read)
  })
  const httpSql = await startFloor(dir, database.url, false)
  const httpSqlPath = await plainPath(httpSql.origin, "/decisions")
  contenders.push({
    name: "effect http+sql",
    service: httpSql,
    fire: (amount) => firePlain(httpSql.origin, httpSqlPath, amount, read)
  })
  const keys = newOperatorKeys()
  const server = await startBundledServer({
    cwd: root,
    logFile: join(dir, "server.log"),
    env: benchServerEnv({ dir, databaseUrl: database.url, keys })
  })
  const { callerKey, decisionId } = await setUpBenchData(server, keys)
  const run = randomBytes(6).toString("hex")
  contenders.push({
    name: "server",
    service: server,
    fire: async (amount) => {
      if (read) {
        return firePlain(server.decisions, `/api/v1/decisions/${decisionId}`, amount, true, {
          authorization: `Bearer ${callerKey}`
        })
      }
      const result = await fireCreates({
        origin: server.decisions,
        callerKey,
        keyPrefix: `floor-${run}`,
        connections,
        amount
      })
      if (result.bad > 0) throw new Error(`the server answered ${result.bad} creates with a status other than 201`)
      return { latencies: Array.from(result.latencies), seconds: result.seconds }
    }
  })

  const totals = contenders.map(() => ({ latencies: [] as Array<number>, seconds: 0, cpu: 0, creates: 0 }))
  for (const contender of contenders) await contender.fire(Math.min(burst, 1000))
  for (let round = 0; round < rounds; round++) {
    for (const [i, contender] of contenders.entries()) {
      const pids = processGroupPids(contender.service.child.pid!)
      const cpu = () => pids.reduce((sum, pid) => sum + processCpuMillis(pid), 0)
      const before = cpu()
      const result = await contender.fire(burst)
      const total = totals[i]!
      total.cpu += cpu() - before
      total.latencies.push(...result.latencies)
      total.seconds += result.seconds
      total.creates += burst
    }
  }
  const figures = totals.map((total) => {
    const sorted = Float64Array.from(total.latencies).sort()
    return {
      rate: total.creates / total.seconds,
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      cpu: total.cpu / total.creates
    }
  })
  const raw = figures[0]!
  process.stdout.write(
    `${read ? "decision get" : "decision create"}, ${connections} connections, ${rounds} rounds of ${burst} each, taking turns:\n` +
      `${"".padEnd(16)} ${"req/s".padStart(7)} ${"p50 ms".padStart(7)} ${"p99 ms".padStart(7)} ` +
      `${"cpu ms".padStart(7)}  ${"rate/raw".padStart(8)} ${"cpu/raw".padStart(8)}\n`
  )
  for (const [i, contender] of contenders.entries()) {
    const f = figures[i]!
    process.stdout.write(
      `${contender.name.padEnd(16)} ${f.rate.toFixed(0).padStart(7)} ${f.p50.toFixed(2).padStart(7)} ` +
        `${f.p99.toFixed(1).padStart(7)} ${f.cpu.toFixed(3).padStart(7)}  ${(f.rate / raw.rate).toFixed(2).padStart(8)} ` +
        `${(f.cpu / raw.cpu).toFixed(2).padStart(8)}\n`
    )
  }
} finally {
  for (const contender of contenders.reverse()) await contender.service.stop()
  await database.drop()
  rmSync(dir, { recursive: true, force: true })
}
