/**
 * Long-polls at scale: the bundled server (started from its compiled bundle, as `npm start` runs it, rate
 * limits lifted) holds N concurrent `GET /api/v1/decisions/{id}?wait=60` (default 10,000, spread over 100
 * decisions) sent by a child process of this script over keep-alive sockets. Measured, per database (the
 * embedded default, and the Postgres server of DATABASE_URL when set, on a fresh database dropped after):
 *
 * - the server's resident memory (RSS) before the long-polls and while they are held, each after a full
 *   garbage collection (the server runs with --expose-gc and collects on SIGUSR2);
 * - p50/p99 of unrelated requests while they are held (`GET /api/v1/health`, and a GET of another decision),
 *   beside the same before them;
 * - the wake-up: the decisions are cancelled one after another, and each waiter's answer is timed from the
 *   moment its decision's cancel was sent (so it includes the cancel itself); every answer must be a 200
 *   with the cancelled decision;
 * - on Postgres, reads of the decision per change by the waiters: lookups of decisions by id (index scans)
 *   during the cancels, less what a cancel without waiters costs (measured first on decisions nobody
 *   waits on), divided by the decisions changed. Postgres publishes these counters about a second after a
 *   statement and at the latest when a connection has been idle 10 s, hence the quiet pauses around each
 *   window. The embedded database serves only the server's own connection, so there the figure is the
 *   test's: test/contract/decisions-long-poll.test.ts proves one read per change whatever the waiters;
 * - shutdown: N long-polls held again, then SIGTERM: how soon all are answered (200 with their decision)
 *   and the process has exited.
 *
 * `npx tsx bench/longpoll.ts [--waiters=N] [--decisions=N] [--db=embedded|postgres]` prints one line per
 * figure; `measureLongPoll` answers them (bench/run.ts shows them under its table). One run per database:
 * holding 10,000 requests is the measurement. Speed is measured here, never asserted in tests.
 */
import { fork } from "node:child_process"

import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { Agent, request } from "node:http"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import pg from "pg"
import { percentile } from "./Report.ts"
import { freshDatabase, startBundledServer, type BundledServer } from "./ServerProcess.ts"
import { benchServerEnv, decisionPayload, inBatches, newOperatorKeys, setUpBenchData } from "./Setup.ts"

export type LongPollDatabase = "embedded" | "postgres"

export interface LongPollOptions {
  readonly databaseUrl?: string | undefined
  readonly databases?: ReadonlyArray<LongPollDatabase> | undefined
  /** Concurrent long-polls held. Default 10,000. */
  readonly waiters?: number | undefined
  /** Decisions they are spread over. Default 100. */
  readonly decisions?: number | undefined
  /** Accepted for bench/run.ts; one run per database is measured whatever it says. */
  readonly runs?: number | undefined
}

export interface LongPollFigures {
  readonly database: LongPollDatabase
  readonly waiters: number
  readonly decisions: number
  readonly rssBeforeMB: number
  readonly rssHeldMB: number
  readonly rssExtraMB: number
  readonly healthBeforeP50Millis: number
  readonly healthBeforeP99Millis: number
  readonly healthHeldP50Millis: number
  readonly healthHeldP99Millis: number
  readonly getBeforeP50Millis: number
  readonly getBeforeP99Millis: number
  readonly getHeldP50Millis: number
  readonly getHeldP99Millis: number
  readonly wakeP50Millis: number
  readonly wakeP99Millis: number
  readonly wakeMaxMillis: number
  /** The cancels themselves (a wake-up is timed from a cancel's sending, so it includes this). */
  readonly cancelP50Millis: number
  readonly cancelP99Millis: number
  /** A waiter's answer after its decision's cancel was answered (negative: before), for where the time goes. */
  readonly wakeAfterCancelAnswerP50Millis: number
  readonly wakeAfterCancelAnswerP99Millis: number
  /**
   * The server's CPU time from the first cancel sent to the last waiter answered, per decision changed: the
   * cancel and the answers to its waiters (from /proc; steadier than the times above on a busy machine).
   */
  readonly serverCpuPerChangeMillis: number
  /** Long-polls not answered 200 with their cancelled decision (must be 0). */
  readonly wrongWakeAnswers: number
  /** Postgres only: decision reads per change by all its waiters together (the design reads once). */
  readonly readsPerChange: number | string
  /** Postgres only: what the figure above is made of, lookups of decisions by id per cancel. */
  readonly lookupsPerCancelAlone: number | string
  readonly lookupsPerCancelWatched: number | string
  readonly shutdownAllAnsweredMillis: number
  readonly shutdownExitMillis: number
  /** Long-polls not answered 200 with their decision on SIGTERM (must be 0). */
  readonly wrongShutdownAnswers: number
}

const root = resolve(import.meta.dirname, "..")
const now = () => performance.timeOrigin + performance.now()
const sleep = (millis: number) => new Promise((r) => setTimeout(r, millis))
const round = (n: number) => Math.round(n * 10) / 10
/**
 * With LONGPOLL_PROFILE_DIR set, the server runs from its TypeScript sources (so a profile names their files)
 * and writes a CPU profile of the cancels and wake-ups alone to that directory (bench/ProfileOnSignal.mjs).
 */
const profileDir = process.env["LONGPOLL_PROFILE_DIR"]
/** Longer than Postgres waits before publishing an idle connection's counters (10 s). */
const statsQuietMillis = 11_500

// ---- the holder: a child process that sends the long-polls and times their answers --------------------

interface HoldMessage {
  readonly type: "hold"
  readonly origin: string
  readonly key: string
  readonly ids: ReadonlyArray<string>
  readonly waiters: number
}

/** One long-poll's answer: its decision's index, when it came (epoch ms), the status code and decision status. */
type Answer = readonly [decision: number, at: number, code: number, status: string]

type HolderMessage = { readonly type: "sent" } | { readonly type: "answered"; readonly answers: ReadonlyArray<Answer> }

const runHolder = () => {
  let agent: Agent | undefined
  process.on("message", (message: HoldMessage) => {
    // Fresh sockets each round: reusing the last round's would race the server closing them when idle.
    agent?.destroy()
    agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY })
    const answers: Array<Answer> = []
    let pending = message.waiters
    const done = () => {
      if (--pending === 0) process.send!({ type: "answered", answers } satisfies HolderMessage)
    }
    const url = new URL(message.origin)
    const poll = (i: number) => {
      const decision = i % message.ids.length
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: `/api/v1/decisions/${message.ids[decision]}?wait=60`,
          headers: { authorization: `Bearer ${message.key}` },
          agent
        },
        (res) => {
          const chunks: Array<Buffer> = []
          res.on("data", (chunk: Buffer) => chunks.push(chunk))
          res.on("end", () => {
            const at = now()
            let status = ""
            try {
              status = JSON.parse(Buffer.concat(chunks).toString("utf8")).data.decision.status
            } catch {
              // not a decision: counted as a wrong answer
            }
            answers.push([decision, at, res.statusCode ?? 0, status])
            done()
          })
        }
      )
      req.on("error", (error: NodeJS.ErrnoException) => {
        answers.push([decision, now(), 0, error.code ?? error.message])
        done()
      })
      req.end()
    }
    // A few hundred at a time, each batch followed by a health check on a new connection: once it answers,
    // the server has taken the batch's connections off its accept queue, which therefore never overflows.
    const probe = () =>
      new Promise<void>((resolvePromise) => {
        const req = request({ host: url.hostname, port: url.port, path: "/api/v1/health", agent: false }, (res) =>
          res.resume().on("end", () => resolvePromise())
        )
        req.on("error", () => resolvePromise())
        req.end()
      })
    void (async () => {
      for (let i = 0; i < message.waiters; i += 250) {
        for (let j = i; j < Math.min(message.waiters, i + 250); j++) poll(j)
        await probe()
      }
      process.send!({ type: "sent" } satisfies HolderMessage)
    })()
  })
}

const startHolder = () => {
  const child = fork(fileURLPath, ["--hold"], { execArgv: ["--import", "tsx"], stdio: "inherit" })
  const next = <T extends HolderMessage["type"]>(type: T) =>
    new Promise<Extract<HolderMessage, { type: T }>>((resolvePromise, reject) => {
      const onMessage = (message: HolderMessage) => {
        if (message.type !== type) return
        child.off("message", onMessage)
        child.off("exit", onExit)
        resolvePromise(message as Extract<HolderMessage, { type: T }>)
      }
      const onExit = () => reject(new Error("the long-poll holder exited"))
      child.on("message", onMessage)
      child.once("exit", onExit)
    })
  return {
    child,
    /** Sends the long-polls; answers when all are sent, with a promise of all their answers. */
    hold: async (message: Omit<HoldMessage, "type">) => {
      const sent = next("sent")
      const answered = next("answered")
      child.send({ type: "hold", ...message } satisfies HoldMessage)
      await sent
      // Wrapped: an async function answering a promise would wait for it.
      return { answered }
    }
  }
}

const fileURLPath = new URL(import.meta.url).pathname

// ---- the measuring side ---------------------------------------------------------------------------------

/** The server's resident memory in MB, from /proc, after it has collected its garbage. */
const rssMB = async (pid: number) => {
  process.kill(pid, "SIGUSR2")
  await sleep(1_000)
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"))
  return round(Number(line?.match(/(\d+)/)?.[1] ?? 0) / 1024)
}

/** The CPU time the process has used, in ms, from /proc (ticks of 10 ms). */
const cpuMillis = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/**
 * Waits until the server has taken in every long-poll sent: until it uses under 5% of a core for a second
 * (accepting and answering the first read of thousands of requests keeps it busy), or 60 s have passed.
 */
const settled = async (pid: number) => {
  const deadline = Date.now() + 60_000
  let quiet = 0
  while (quiet < 2 && Date.now() < deadline) {
    const before = cpuMillis(pid)
    await sleep(500)
    quiet = cpuMillis(pid) - before < 25 ? quiet + 1 : 0
  }
}

const agent = new Agent({ keepAlive: true, maxSockets: 4 })

/** One request over a keep-alive socket, timed to the end of its body; fails on an answer outside 2xx. */
const timed = (origin: string, path: string, headers: Record<string, string> = {}, method = "GET", body?: string) =>
  new Promise<{ millis: number; body: string }>((resolvePromise, reject) => {
    const url = new URL(path, origin)
    const started = performance.now()
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        agent,
        headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) }
      },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8")
          if ((res.statusCode ?? 0) >= 300) reject(new Error(`${method} ${path} answered ${res.statusCode}: ${text}`))
          else resolvePromise({ millis: performance.now() - started, body: text })
        })
      }
    )
    req.on("error", reject)
    req.end(body)
  })

/** p50/p99 of `count` unrelated requests, one after another with a short pause (a steady trickle). */
const latencies = async (count: number, send: () => Promise<{ millis: number }>) => {
  const millis: Array<number> = []
  for (let i = 0; i < count; i++) {
    millis.push((await send()).millis)
    await sleep(5)
  }
  millis.sort((a, b) => a - b)
  return { p50: round(percentile(millis, 50)), p99: round(percentile(millis, 99)) }
}

/**
 * Lookups of decisions by id so far, as Postgres has published them: scans of the two indexes that serve
 * them (the planner picks either), not of those the expiry sweep and the action workers scan.
 */
const decisionLookups = async (client: pg.Client) =>
  Number(
    (
      await client.query(
        `SELECT coalesce(sum(idx_scan), 0) AS scans FROM pg_stat_user_indexes
         WHERE schemaname = 'decisions' AND indexrelname IN ('decisions_pkey', 'decisions_newest')`
      )
    ).rows[0].scans
  )

/** How many answers are not a 200 with a decision in `status`; a breakdown of them goes to stdout. */
const wrongAnswers = (label: string, answers: ReadonlyArray<Answer>, status: string) => {
  const wrong = answers.filter(([, , code, got]) => code !== 200 || got !== status)
  if (wrong.length > 0) {
    const kinds = new Map<string, number>()
    for (const [, , code, got] of wrong) kinds.set(`${code} ${got}`, (kinds.get(`${code} ${got}`) ?? 0) + 1)
    process.stdout.write(`${label}: ${wrong.length} wrong answers: ${JSON.stringify([...kinds])}\n`)
  }
  return wrong.length
}

const measureOne = async (
  database: LongPollDatabase,
  databaseUrl: string | undefined,
  waiters: number,
  decisionCount: number
): Promise<LongPollFigures> => {
  const dir = mkdtempSync(join(tmpdir(), `hitl-longpoll-${database}-`))
  const fresh = database === "postgres" ? await freshDatabase(databaseUrl!, "bench_longpoll") : undefined
  const keys = newOperatorKeys()
  let server: BundledServer | undefined
  const holder = startHolder()
  const stats = fresh === undefined ? undefined : new pg.Client({ connectionString: fresh.url })
  try {
    server = await startBundledServer({
      cwd: root,
      logFile: process.env["LONGPOLL_SERVER_LOG"] ?? join(dir, "server.log"),
      // The compiled bundle in this very process (scripts/start.mjs imports it): its pid is the server's.
      // SIGUSR2 makes it collect its garbage, so that memory is compared without what was merely not freed yet.
      command: {
        command: process.execPath,
        args: [
          "--expose-gc",
          ...(process.env["LONGPOLL_NODE_ARGS"]?.split(" ").filter((arg) => arg !== "") ?? []),
          "--import",
          "data:text/javascript,process.on('SIGUSR2',()=>globalThis.gc())",
          ...(profileDir === undefined
            ? ["scripts/start.mjs"]
            : ["--import", "./bench/ProfileOnSignal.mjs", "--import", "tsx", "apps/server/main.ts"])
        ]
      },
      env: benchServerEnv({
        dir,
        databaseUrl: fresh?.url,
        keys,
        extra: { SHUTDOWN_DRAIN_MS: "60000", ...(profileDir === undefined ? {} : { PROFILE_DIR: profileDir }) }
      })
    })
    const origin = server.decisions
    const data = await setUpBenchData(server, keys)
    const caller = { authorization: `Bearer ${data.callerKey}` }
    const create = async (label: string) =>
      JSON.parse(
        (
          await timed(
            origin,
            "/api/v1/decisions",
            { ...caller, "idempotency-key": `longpoll-${label}` },
            "POST",
            decisionPayload(0)
          )
        ).body
      ).data.decision.id as string
    const ids: Array<string> = []
    const controls: Array<string> = []
    await inBatches(decisionCount, async (n) => void ids.push(await create(`watched-${n}`)))
    await inBatches(10, async (n) => void controls.push(await create(`control-${n}`)))
    const cancel = (id: string) =>
      timed(origin, `/api/v1/decisions/${id}/cancel`, { ...caller, "idempotency-key": `cancel-${id}` }, "POST")
    const health = () => timed(origin, "/api/v1/health")
    const unrelated = () => timed(origin, `/api/v1/decisions/${data.decisionId}`, caller)
    process.stdout.write(`[${database}] server up, ${decisionCount} decisions to wait on\n`)

    // What a cancel reads of the decisions table by itself, nobody waiting.
    let lookupsAlone = 0
    if (stats !== undefined) {
      await stats.connect()
      await sleep(statsQuietMillis)
      const before = await decisionLookups(stats)
      for (const id of controls) await cancel(id)
      await sleep(statsQuietMillis)
      lookupsAlone = ((await decisionLookups(stats)) - before) / controls.length
    }

    const healthBefore = await latencies(200, health)
    const getBefore = await latencies(200, unrelated)
    await settled(server.child.pid!)
    const rssBefore = await rssMB(server.child.pid!)

    process.stdout.write(`[${database}] holding ${waiters} long-polls ...\n`)
    const { answered } = await holder.hold({ origin, key: data.callerKey, ids, waiters })
    await settled(server.child.pid!)
    const healthHeld = await latencies(300, health)
    const getHeld = await latencies(300, unrelated)
    const rssHeld = await rssMB(server.child.pid!)

    // The changes: one decision after another, each timed from the moment its cancel is sent.
    if (stats !== undefined) await sleep(statsQuietMillis)
    const scansBefore = stats === undefined ? 0 : await decisionLookups(stats)
    if (profileDir !== undefined) process.kill(server.child.pid!, "SIGWINCH")
    const cpuBefore = cpuMillis(server.child.pid!)
    const changedAt: Array<number> = []
    const answeredAt: Array<number> = []
    const cancels: Array<number> = []
    for (const [i, id] of ids.entries()) {
      changedAt[i] = now()
      cancels.push((await cancel(id)).millis)
      answeredAt[i] = now()
      await sleep(10)
    }
    cancels.sort((a, b) => a - b)
    const answers = (await answered).answers
    const serverCpuPerChange = round((cpuMillis(server.child.pid!) - cpuBefore) / ids.length)
    if (profileDir !== undefined) process.kill(server.child.pid!, "SIGWINCH")
    let readsPerChange: number | string = "1 (embedded: see test/contract/decisions-long-poll.test.ts)"
    let lookupsPerCancelWatched: number | string = "-"
    if (stats !== undefined) {
      await sleep(statsQuietMillis)
      const scans = (await decisionLookups(stats)) - scansBefore
      lookupsPerCancelWatched = round(scans / ids.length)
      readsPerChange = round(scans / ids.length - lookupsAlone)
    }
    const wakes = answers.map(([decision, at]) => Math.max(0, at - changedAt[decision]!)).sort((a, b) => a - b)
    const afterCancel = answers.map(([decision, at]) => at - answeredAt[decision]!).sort((a, b) => a - b)
    const wrongWakeAnswers = wrongAnswers(`[${database}] wake-up`, answers, "cancelled")

    // Shutdown: the same crowd held again (on cancelled decisions, which never change), then SIGTERM.
    process.stdout.write(`[${database}] holding ${waiters} long-polls again, then SIGTERM ...\n`)
    const { answered: held } = await holder.hold({ origin, key: data.callerKey, ids, waiters })
    await settled(server.child.pid!)
    const exited = new Promise<number>((r) => server!.child.once("exit", () => r(now())))
    const signalled = now()
    process.kill(server.child.pid!, "SIGTERM")
    const drained = (await held).answers
    const exitAt = await exited
    const wrongShutdownAnswers = wrongAnswers(`[${database}] shutdown`, drained, "cancelled")

    return {
      database,
      waiters,
      decisions: decisionCount,
      rssBeforeMB: rssBefore,
      rssHeldMB: rssHeld,
      rssExtraMB: round(rssHeld - rssBefore),
      healthBeforeP50Millis: healthBefore.p50,
      healthBeforeP99Millis: healthBefore.p99,
      healthHeldP50Millis: healthHeld.p50,
      healthHeldP99Millis: healthHeld.p99,
      getBeforeP50Millis: getBefore.p50,
      getBeforeP99Millis: getBefore.p99,
      getHeldP50Millis: getHeld.p50,
      getHeldP99Millis: getHeld.p99,
      wakeP50Millis: round(percentile(wakes, 50)),
      wakeP99Millis: round(percentile(wakes, 99)),
      wakeMaxMillis: round(wakes[wakes.length - 1] ?? 0),
      cancelP50Millis: round(percentile(cancels, 50)),
      cancelP99Millis: round(percentile(cancels, 99)),
      wakeAfterCancelAnswerP50Millis: round(percentile(afterCancel, 50)),
      wakeAfterCancelAnswerP99Millis: round(percentile(afterCancel, 99)),
      serverCpuPerChangeMillis: serverCpuPerChange,
      wrongWakeAnswers,
      readsPerChange,
      lookupsPerCancelAlone: stats === undefined ? "-" : round(lookupsAlone),
      lookupsPerCancelWatched,
      shutdownAllAnsweredMillis: round(Math.max(...drained.map(([, at]) => at)) - signalled),
      shutdownExitMillis: round(exitAt - signalled),
      wrongShutdownAnswers
    }
  } finally {
    holder.child.kill("SIGKILL")
    await server?.stop()
    await stats?.end().catch(() => undefined)
    await fresh?.drop()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Measures each database in turn (Postgres only with a `databaseUrl`); see the top of this file. */
export const measureLongPoll = async (options: LongPollOptions = {}): Promise<ReadonlyArray<LongPollFigures>> => {
  const databaseUrl = options.databaseUrl === "" ? undefined : options.databaseUrl
  const databases = (options.databases ?? ["embedded", "postgres"]).filter(
    (kind) => kind === "embedded" || databaseUrl !== undefined
  )
  const figures: Array<LongPollFigures> = []
  for (const database of databases) {
    figures.push(await measureOne(database, databaseUrl, options.waiters ?? 10_000, options.decisions ?? 100))
  }
  agent.destroy()
  return figures
}

const units: Record<string, string> = { MB: "MB", Millis: "ms" }

const printFigures = (figures: LongPollFigures) => {
  for (const [name, value] of Object.entries(figures)) {
    if (name === "database") continue
    const unit = Object.keys(units).find((suffix) => name.endsWith(suffix))
    const label = unit === undefined ? name : name.slice(0, -unit.length)
    process.stdout.write(
      `longpoll (${figures.database}) ${label}: ${value}${unit === undefined ? "" : ` ${units[unit]}`}\n`
    )
  }
}

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href
if (isMain && process.argv.includes("--hold")) {
  runHolder()
} else if (isMain) {
  const option = (name: string) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3)
  const db = option("db") as LongPollDatabase | undefined
  const all = await measureLongPoll({
    databaseUrl: process.env["DATABASE_URL"],
    databases: db === undefined ? undefined : [db],
    waiters: option("waiters") === undefined ? undefined : Number(option("waiters")),
    decisions: option("decisions") === undefined ? undefined : Number(option("decisions"))
  })
  for (const figures of all) printFigures(figures)
}
