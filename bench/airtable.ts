/**
 * The task inbox on an Airtable base (TASKS_RECORD_STORE=airtable), against the local stand-in of Airtable's API
 * (test/fakes/airtable), which keeps Airtable's limits: 5 requests per second per base, then 429 for 30 s.
 * The bundled server runs as `npm start` runs it; the stand-in runs in this process and counts every request.
 * Measured:
 *
 * - list: the latency of `GET /api/tasks` over an inbox of 1,000 tasks (10 pages of 100 from the base), a few
 *   times, with the requests each list sent;
 * - burst: 1,000 bulk updates (10 bulk calls of 100 tasks, all at once) through two server instances sharing
 *   one Postgres database and one Redis (the rate-limit store): how long they took, the requests the base
 *   received, the most in any one second, and the 429s. Needs DATABASE_URL and REDIS_URL; without them it is
 *   not measured, and the rest runs on one instance on the embedded database;
 * - writes: the write requests (PATCH to the tasks table) bulk updates of n tasks sent, beside ceil(n / 10).
 *
 * The 1,000 tasks are made by one create through the API, copied in the stand-in's base (making them through
 * the API would take 25 s of the base's turns and measure nothing more).
 *
 * `npx tsx bench/airtable.ts [--db=embedded|postgres]` prints one line per figure; `measureAirtable` answers
 * them (`npm run bench` shows them under its table; `npm run bench -- --only=airtable` runs only this).
 * Speed is measured here, never asserted in tests.
 */
import { Effect, Layer, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { ensureBase } from "../adapters/airtable/AirtableBase.ts"
import { airtableTables } from "../adapters/airtable/AirtableFields.ts"
import { AirtableLimiterFromStore } from "../adapters/airtable/AirtableLimiter.ts"
import { newId } from "../test/fakes/airtable/FieldTypes.ts"
import { busiest, newBaseId, startAirtableStandIn, type AirtableStandIn } from "../test/fakes/AirtableStandIn.ts"
import { percentile, type ExtraFigure } from "./Report.ts"
import { freshDatabase, startBundledServer, type BundledServer } from "./ServerProcess.ts"
import { benchServerEnv, machineKeys, newOperatorKeys } from "./Setup.ts"

export interface AirtableBenchOptions {
  readonly databaseUrl?: string | undefined
  readonly redisUrl?: string | undefined
  /** `["embedded"]` runs one instance on the embedded database even when DATABASE_URL is set. */
  readonly databases?: ReadonlyArray<"embedded" | "postgres"> | undefined
  /** How many times the 1,000-task list is timed. Default 3. */
  readonly runs?: number | undefined
}

const root = resolve(import.meta.dirname, "..")
const token = "patBench.0123456789abcdef0123456789abcdef"
const inboxSize = 1_000
const burstCalls = 10
const writeSizes = [1, 10, 25, 50, 100] as const

const call = async (origin: string, key: string, method: string, path: string, body?: unknown) => {
  const response = await fetch(`${origin}${path}`, {
    method,
    headers: {
      "x-api-key": key,
      ...(body === undefined ? {} : { "content-type": "application/json", "idempotency-key": newId("bench") })
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`)
  return text === "" ? undefined : JSON.parse(text)
}

/** The tasks table's records, newest last. */
const tasksOf = (standIn: AirtableStandIn, baseId: string) => standIn.table(baseId, "Tasks")

/**
 * `count` copies of the task record `id` in the stand-in's base, each with a title and a creation time of its
 * own (after every other task's): answers their ids as the task inbox names them.
 */
const copyTask = (standIn: AirtableStandIn, baseId: string, id: string, count: number, label: string) => {
  const table = tasksOf(standIn, baseId)
  const original = table.records.get(id)!
  const ids: Array<string> = []
  const start = Date.now()
  for (let i = 0; i < count; i++) {
    const copy = newId("rec")
    table.records.set(copy, {
      id: copy,
      createdTime: new Date(start + i).toISOString(),
      fields: { ...original.fields, Title: `${label} ${i + 1}`, "Created At": new Date(start + i).toISOString() }
    })
    ids.push(copy)
  }
  return ids
}

/** Requests the base received from `since` on: all, writes to the tasks table, 429s, the most in a second. */
const requestsSince = (standIn: AirtableStandIn, baseId: string, since: number) => {
  const seen = standIn.requests.slice(since).filter((r) => r.baseId === baseId)
  return {
    all: seen.length,
    /** Arrival times (ms from the first) of the requests in the second before each 429. */
    before429: seen
      .filter((r) => r.status === 429)
      .map((r) => seen.filter((o) => o.at > r.at - 1_000 && o.at <= r.at).map((o) => o.at - seen[0]!.at)),
    taskWrites: seen.filter((r) => r.method === "PATCH" && r.path.endsWith("/Tasks")).length,
    tooMany: seen.filter((r) => r.status === 429).length,
    busiestSecond: busiest(seen.map((r) => r.at))
  }
}

const setUpBase = (standIn: AirtableStandIn, baseId: string) =>
  Effect.runPromise(
    ensureBase({ endpointUrl: standIn.url, baseId, token: Redacted.make(token) }, airtableTables()).pipe(
      Effect.provide(
        Layer.merge(AirtableLimiterFromStore().pipe(Layer.provide(RateLimiter.layerStoreMemory)), FetchHttpClient.layer)
      )
    )
  )

export const measureAirtable = async (options: AirtableBenchOptions = {}): Promise<ReadonlyArray<ExtraFigure>> => {
  const redisUrl = options.redisUrl ?? process.env["REDIS_URL"]
  const shared =
    options.databaseUrl !== undefined &&
    options.databaseUrl !== "" &&
    redisUrl !== undefined &&
    redisUrl !== "" &&
    (options.databases === undefined || options.databases.includes("postgres"))
  const runs = options.runs ?? 3
  const dir = mkdtempSync(join(tmpdir(), "hitl-bench-airtable-"))
  const baseId = newBaseId()
  const standIn = await startAirtableStandIn({ tokens: [token], bases: { [baseId]: {} } })
  const cleanups: Array<() => Promise<void>> = [() => standIn.close()]
  const figures: Array<ExtraFigure> = []
  const figure = (name: string, value: number | string, unit?: string) => {
    figures.push({ name: `airtable: ${name}`, value, unit })
    const shown = typeof value === "number" ? Math.round(value) : value
    process.stdout.write(`airtable: ${name}: ${shown}${unit === undefined ? "" : ` ${unit}`}\n`)
  }
  let failed = false
  try {
    await setUpBase(standIn, baseId)
    const database = shared ? await freshDatabase(options.databaseUrl!, "benchairtable") : undefined
    if (database !== undefined) cleanups.unshift(database.drop)
    const env = benchServerEnv({
      dir,
      databaseUrl: database?.url,
      keys: newOperatorKeys(),
      extra: {
        TASKS_RECORD_STORE: "airtable",
        AIRTABLE_ENDPOINT_URL: standIn.url,
        AIRTABLE_BASE_ID: baseId,
        AIRTABLE_TOKEN: token,
        ...(shared ? { REDIS_URL: redisUrl! } : {})
      }
    })
    const servers: Array<BundledServer> = []
    for (const n of shared ? [1, 2] : [1]) {
      process.stdout.write(`[airtable] starting server instance ${n} (npm start) ...\n`)
      const server = await startBundledServer({
        cwd: root,
        logFile: join(dir, `server-${n}.log`),
        env: { ...env, DATA_DIR: join(dir, `server-data-${n}`) }
      })
      cleanups.unshift(server.stop)
      servers.push(server)
    }
    const [first] = servers as [BundledServer]
    const key: string = (
      await call(first.tasks, machineKeys.reader.key, "POST", "/api/settings/api-keys", { name: "bench" })
    ).key
    const created = (await call(first.tasks, key, "POST", "/api/tasks", { title: "Bench task", priority: "HIGH" })).task
    const recordId = `rec${String(created.id).slice(3)}`
    const inbox = [created.id as string, ...copyTask(standIn, baseId, recordId, inboxSize - 1, "Bench task")]

    // The list: 1,000 tasks, 10 pages from the base.
    const latencies: Array<number> = []
    let perList = 0
    for (let run = 0; run < runs; run++) {
      const since = standIn.requests.length
      const started = performance.now()
      const listed = (await call(first.tasks, key, "GET", "/api/tasks")).tasks as ReadonlyArray<unknown>
      latencies.push(performance.now() - started)
      if (listed.length !== inboxSize) throw new Error(`the inbox listed ${listed.length} tasks, not ${inboxSize}`)
      perList = requestsSince(standIn, baseId, since).all
    }
    latencies.sort((a, b) => a - b)
    figure(
      `list of ${inboxSize} tasks (${perList} requests to the base), p50 of ${runs}`,
      percentile(latencies, 50),
      "ms"
    )
    figure(`list of ${inboxSize} tasks, slowest of ${runs}`, latencies.at(-1)!, "ms")

    // The burst: 1,000 bulk updates at once, spread over the instances.
    if (shared) {
      const since = standIn.requests.length
      const started = performance.now()
      const size = inboxSize / burstCalls
      let refused = 0
      // A bulk call answered 502 (its base busy) is sent again a little later, as a client would.
      const bulk = async (i: number) => {
        for (let attempt = 1; ; attempt++) {
          try {
            return await call(servers[i % servers.length]!.tasks, key, "POST", "/api/tasks/bulk", {
              action: "done",
              taskIds: inbox.slice(i * size, (i + 1) * size)
            })
          } catch (error) {
            refused++
            process.stdout.write(`[airtable] bulk call ${i + 1}, attempt ${attempt}: ${error}\n`)
            if (attempt === 6) throw error
            await new Promise((resolve) => setTimeout(resolve, 10_000))
          }
        }
      }
      const answers = await Promise.all(Array.from({ length: burstCalls }, (_, i) => bulk(i)))
      const seconds = (performance.now() - started) / 1000
      const updated = answers.reduce((sum, answer) => sum + answer.successful.length, 0)
      const seen = requestsSince(standIn, baseId, since)
      for (const times of seen.before429.slice(0, 3)) {
        process.stdout.write(`[airtable] a 429, and the requests of the second before it (ms): ${times.join(", ")}\n`)
      }
      figure(
        `burst of ${inboxSize} bulk updates (${burstCalls} calls of ${size}, two instances sharing Redis)`,
        `${updated} updated in ${seconds.toFixed(1)} s; ${seen.all} requests to the base (${seen.taskWrites} writes, ` +
          `ceil(n/10) = ${Math.ceil(inboxSize / 10)}); at most ${seen.busiestSecond} in any second; ${seen.tooMany} × 429; ` +
          `${refused} bulk calls answered 502 and sent again`
      )
    } else {
      figure("burst of 1,000 bulk updates on two instances", "not measured (needs DATABASE_URL and REDIS_URL)")
    }

    // Writes per bulk update of n tasks.
    const parts: Array<string> = []
    for (const n of writeSizes) {
      const ids = copyTask(standIn, baseId, recordId, n, `Bulk ${n}`)
      const since = standIn.requests.length
      const answer = await call(first.tasks, key, "POST", "/api/tasks/bulk", { action: "done", taskIds: ids })
      if (answer.successful.length !== n) throw new Error(`a bulk update of ${n} changed ${answer.successful.length}`)
      const seen = requestsSince(standIn, baseId, since)
      parts.push(`n=${n}: ${seen.taskWrites} (ceil ${Math.ceil(n / 10)})`)
    }
    figure("write requests for a bulk update of n tasks", parts.join(", "))
    const overall = requestsSince(standIn, baseId, 0)
    figure(
      "whole run (setup included)",
      `${overall.all} requests; at most ${overall.busiestSecond} in any second; ${overall.tooMany} × 429`
    )
    return figures
  } catch (error) {
    failed = true
    throw new Error(`[airtable] ${error instanceof Error ? error.message : String(error)} (logs kept in ${dir})`)
  } finally {
    for (const cleanup of cleanups) await cleanup().catch((error) => process.stderr.write(`cleanup: ${error}\n`))
    if (!failed) rmSync(dir, { recursive: true, force: true })
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const db = process.argv.find((arg) => arg.startsWith("--db="))?.slice("--db=".length)
  await measureAirtable({
    databaseUrl: process.env["DATABASE_URL"],
    databases: db === "embedded" || db === "postgres" ? [db] : undefined
  })
}
