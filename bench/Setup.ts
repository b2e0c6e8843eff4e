/**
 * The data the benchmark needs, set up the way an operator and a user would, through the public APIs of the
 * running server: the hub's operator API (an organization, two members, a registered producer with an event
 * type), the decisions workspace (a role held by one member, a caller key) and the task inbox (a personal API
 * key per user, made with the operator's machine key). Any answer outside 2xx stops the benchmark.
 */
import autocannon from "autocannon"
import { createHmac, randomBytes } from "node:crypto"
import { join } from "node:path"
import { ulid } from "ulid"
import type { BundledServer } from "./ServerProcess.ts"

export const benchOrgName = "Bench Org"
export const adminEmail = "admin@bench.example"
export const deciderEmail = "ada@bench.example"
export const roleSlug = "ops"
export const producerId = "benchbot"
export const eventType = `${producerId}.report.generated`
export const taskCreatorEmail = "alice@bench.example"
export const taskReaderEmail = "bob@bench.example"
/** The reader's inbox holds this many tasks: the list answers all of them, on both sides. */
export const taskInboxSize = 25
/**
 * Decisions in the organization before anything is measured: the inbox list reads a page of them. The reads
 * run before the creates, so both sides read tables of the same size.
 */
export const decisionsSeeded = 200

/** `key:email:Name` entries for TASKS_MACHINE_KEYS: the operator's way in to issue the users' own keys. */
export const machineKeys = {
  creator: { key: "bench-machine-key-alice-0001", email: taskCreatorEmail, name: "Alice Bench" },
  reader: { key: "bench-machine-key-bob-000001", email: taskReaderEmail, name: "Bob Bench" }
} as const
export const machineKeysSetting = Object.values(machineKeys)
  .map((k) => `${k.key}:${k.email}:${k.name}`)
  .join(",")

export interface BenchData {
  readonly orgId: string
  readonly callerKey: string
  readonly decisionId: string
  readonly signingKey: string
  readonly creatorTaskKey: string
  readonly readerTaskKey: string
  /** A fresh identity token (300 s) for a workspace user, minted by the hub. */
  readonly workspaceToken: (email: string) => Promise<string>
}

export const decisionPayload = (n: number) =>
  JSON.stringify({
    title: `Refund order ${n}?`,
    roleSlug,
    body: "The customer reports the parcel arrived damaged; photos attached in the ticket.",
    facts: [
      { label: "Order", value: String(n) },
      { label: "Amount", value: "42.00 EUR" }
    ],
    options: [
      { id: "refund", label: "Refund" },
      { id: "replace", label: "Replace" }
    ]
  })

export const taskPayload = (n: number) => JSON.stringify({ title: `Follow up on order ${n}`, priority: "HIGH" })

export const eventBody = (id: string, occurredAt: string, type = eventType) =>
  JSON.stringify({
    id,
    type,
    service: producerId,
    occurredAt,
    subject: { email: deciderEmail },
    data: { title: "Weekly report ready", pages: 12 },
    contractVersion: "v1"
  })

/**
 * A POST of the benchmark's event to `path`, signed with `signingKey` (`v1=<hex HMAC-SHA256 of
 * "<timestamp>.<raw body>">`), with a fresh event id and the current second.
 */
export const signedEvent = (path: string, signingKey: string, type = eventType) => {
  const id = ulid()
  const timestamp = Math.floor(Date.now() / 1000)
  const body = eventBody(id, new Date().toISOString(), type)
  const signature = createHmac("sha256", signingKey).update(`${timestamp}.${body}`).digest("hex")
  return {
    method: "POST" as const,
    path,
    headers: {
      "content-type": "application/json",
      "x-platform-signature": `v1=${signature}`,
      "x-platform-timestamp": String(timestamp),
      "x-platform-event-id": id,
      "x-platform-delivery": `d-${id}`
    },
    body
  }
}

/** Runs `count` calls, a few at a time. */
export const inBatches = async (count: number, f: (n: number) => Promise<unknown>, size = 8) => {
  for (let start = 0; start < count; start += size) {
    await Promise.all(Array.from({ length: Math.min(size, count - start) }, (_, i) => f(start + i)))
  }
}

const call = async (method: string, url: string, headers: Record<string, string>, body?: unknown): Promise<any> => {
  const response = await fetch(url, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`setup: ${method} ${url} answered ${response.status}: ${text.slice(0, 500)}`)
  return text.length === 0 ? undefined : JSON.parse(text)
}

/** The server's own secrets, which the benchmark chose: the operator's key and the hub's key for decisions. */
export interface OperatorKeys {
  readonly hubAdminKey: string
  readonly decisionsApiKey: string
}

export const setUpBenchData = async (server: BundledServer, keys: OperatorKeys): Promise<BenchData> => {
  const operator = { authorization: `Bearer ${keys.hubAdminKey}` }
  const admin = (method: string, path: string, body?: unknown) => call(method, `${server.hub}${path}`, operator, body)

  const orgId: string = (await admin("POST", "/api/v1/admin/orgs", { name: benchOrgName, tier: "monthly" })).data.org.id
  for (const [email, name, role] of [
    [adminEmail, "Bench Admin", "ADMIN"],
    [deciderEmail, "Ada Bench", "MEMBER"]
  ] as const) {
    await admin("POST", "/api/v1/admin/users", { email, name, verified: true })
    await admin("POST", `/api/v1/admin/orgs/${orgId}/members`, { email, role })
  }
  const workspaceToken = async (email: string): Promise<string> =>
    (await admin("POST", "/api/v1/admin/tokens", { service: "decisions", email, companyId: orgId })).data.token

  const registered = await admin("POST", "/api/v1/admin/services", {
    id: producerId,
    displayName: "Bench bot",
    baseUrl: "https://bot.bench.example"
  })
  const signingKey: string = registered.data.credentials.signingKey
  await admin("POST", "/api/v1/admin/event-catalog", {
    type: eventType,
    producer: producerId,
    isNotification: false,
    dataSchema: {
      type: "object",
      required: ["title"],
      properties: { title: { type: "string", maxLength: 200 }, pages: { type: "integer", minimum: 0 } }
    }
  })

  const workspace = {
    "x-decisions-api-key": keys.decisionsApiKey,
    "x-workspace-token": await workspaceToken(adminEmail)
  }
  const ws = (path: string, body: unknown) => call("POST", `${server.decisions}${path}`, workspace, body)
  await ws("/api/v1/workspace/roles", { slug: roleSlug, name: "Operations" })
  await ws(`/api/v1/workspace/roles/${roleSlug}/assignments`, { memberEmail: deciderEmail })
  const callerKey: string = (await ws("/api/v1/workspace/keys", { name: "bench-agent" })).data.plaintext
  const createDecision = async (n: number): Promise<string> =>
    (
      await call(
        "POST",
        `${server.decisions}/api/v1/decisions`,
        { authorization: `Bearer ${callerKey}`, "idempotency-key": `bench-setup-${n}` },
        JSON.parse(decisionPayload(n))
      )
    ).data.decision.id
  const decisionId = await createDecision(0)
  await inBatches(decisionsSeeded - 1, (n) => createDecision(n + 1))

  const personalKey = async (machineKey: string): Promise<string> =>
    (await call("POST", `${server.tasks}/api/settings/api-keys`, { "x-api-key": machineKey }, { name: "bench" })).key
  const creatorTaskKey = await personalKey(machineKeys.creator.key)
  const readerTaskKey = await personalKey(machineKeys.reader.key)
  await inBatches(taskInboxSize, (n) =>
    call("POST", `${server.tasks}/api/tasks`, { "x-api-key": readerTaskKey }, JSON.parse(taskPayload(n)))
  )
  return { orgId, callerKey, decisionId, signingKey, creatorTaskKey, readerTaskKey, workspaceToken }
}

/** A fresh random secret for a benchmarked server's settings. */
export const benchSecret = () => randomBytes(24).toString("hex")

/** Far above what any load reaches: a benchmark measures work, never a 429. */
export const unlimitedRate = "1000000000"

/**
 * The settings every benchmarked server starts with: its data under `dir`, the Postgres database `databaseUrl`
 * when given (else the embedded one), the operator keys, a fresh secret for every other key, the task inbox's
 * machine keys, and every per-minute limit lifted; `BENCH_SERVER_ENV` (JSON) and `extra` on top.
 */
export const benchServerEnv = (options: {
  readonly dir: string
  readonly databaseUrl?: string | undefined
  readonly keys: OperatorKeys
  readonly extra?: Readonly<Record<string, string>> | undefined
}): Record<string, string> => ({
  DATA_DIR: join(options.dir, "server-data"),
  ...(options.databaseUrl === undefined ? {} : { DATABASE_URL: options.databaseUrl }),
  HUB_ADMIN_KEY: options.keys.hubAdminKey,
  HUB_SECRETS_KEY: benchSecret(),
  DECISIONS_API_KEY: options.keys.decisionsApiKey,
  DECISIONS_EMBED_KEY: benchSecret(),
  DECISIONS_SECRETS_KEY: benchSecret(),
  TASKS_API_KEY: benchSecret(),
  TASKS_SIGNING_KEY: benchSecret(),
  TASKS_SECRETS_KEY: benchSecret(),
  TASKS_MACHINE_KEYS: machineKeysSetting,
  DECISIONS_CALLER_RATE_LIMIT: unlimitedRate,
  DECISIONS_USER_RATE_LIMIT: unlimitedRate,
  HUB_EVENTS_PER_MINUTE: unlimitedRate,
  HUB_CALLS_PER_MINUTE: unlimitedRate,
  ...(JSON.parse(process.env["BENCH_SERVER_ENV"] ?? "{}") as Record<string, string>),
  ...options.extra
})

/** New operator keys for a benchmarked server. */
export const newOperatorKeys = (): OperatorKeys => ({ hubAdminKey: benchSecret(), decisionsApiKey: benchSecret() })

let createsFired = 0

/**
 * `amount` decision creates over `connections` connections, each with a key of its own (`keyPrefix` and a
 * count) and the benchmark's payload: answers the latencies (sorted), the seconds from the first request to the
 * last answer, and how many answers were not 201. `path` (default the decisions API's) sends them elsewhere: the
 * raw baseline's create is `/decisions?org=<id>`, which reads the same payload and ignores the headers.
 */
export const fireCreates = (options: {
  readonly origin: string
  readonly callerKey: string
  readonly keyPrefix: string
  readonly connections: number
  readonly amount: number
  readonly path?: string | undefined
}) =>
  new Promise<{ readonly latencies: Float64Array; readonly seconds: number; readonly bad: number }>(
    (resolve, reject) => {
      const latencies: Array<number> = []
      let bad = 0
      const started = performance.now()
      let last = started
      const instance = autocannon(
        {
          url: options.origin,
          connections: options.connections,
          amount: options.amount,
          timeout: 30,
          requests: [
            {
              method: "POST",
              path: options.path ?? "/api/v1/decisions",
              setupRequest: (request) => {
                const n = ++createsFired
                return {
                  ...request,
                  method: "POST",
                  path: options.path ?? "/api/v1/decisions",
                  headers: {
                    "content-type": "application/json",
                    authorization: `Bearer ${options.callerKey}`,
                    "idempotency-key": `${options.keyPrefix}-${n}`
                  },
                  body: decisionPayload(n)
                }
              }
            }
          ]
        },
        (error) =>
          error
            ? reject(error)
            : resolve({ latencies: Float64Array.from(latencies).sort(), seconds: (last - started) / 1000, bad })
      )
      instance.on("response", (_client, status, _bytes, ms) => {
        last = performance.now()
        if (status !== 201) bad++
        latencies.push(ms)
      })
    }
  )
