/**
 * The raw baseline: a plain node:http server and a Postgres client doing the least work each benchmarked
 * path needs (one statement per request, no framework, no authentication but the event signature), on the
 * same kind of database as the server under test. Its figures are the floor the bundled server is compared
 * with. Run as a child process by bench/Baseline.ts; configured by environment variables:
 *
 * - BASELINE_PORT: where to listen (loopback).
 * - BASELINE_DATABASE_URL: a Postgres server; the tables go in schema BASELINE_SCHEMA (default `raw`).
 * - BASELINE_DATA_DIR: otherwise, PGlite kept under that folder and served over pglite-socket on a Unix socket
 *   in a private temporary folder, reached with a pool of one connection, as the bundled server reaches its
 *   embedded database.
 * - BASELINE_SIGNING_KEY: the producer's HMAC key for the event path.
 */
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { createHmac, timingSafeEqual } from "node:crypto"
import { mkdtemp, rm } from "node:fs/promises"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { ulid } from "ulid"
import { decisionsTable } from "./BaselineTables.ts"

const env = (name: string) => process.env[name]
const port = Number(env("BASELINE_PORT") ?? "0")
const schema = env("BASELINE_SCHEMA") ?? "raw"
const signingKey = env("BASELINE_SIGNING_KEY") ?? ""
if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error("BASELINE_SCHEMA must be a plain identifier")

const openPool = async (): Promise<{ pool: pg.Pool; close: () => Promise<void> }> => {
  const url = env("BASELINE_DATABASE_URL")
  if (url !== undefined && url !== "") {
    const pool = new pg.Pool({ connectionString: url, max: 10 })
    return { pool, close: () => pool.end() }
  }
  const dataDir = env("BASELINE_DATA_DIR")
  const db = await PGlite.create(dataDir === undefined ? {} : { dataDir })
  // pg reaches a Unix socket by its folder (`host`) and a name made of the port: `<host>/.s.PGSQL.<port>`.
  const socketDir = await mkdtemp(join(tmpdir(), "hitl-baseline-"))
  const socket = new PGLiteSocketServer({ db, path: join(socketDir, ".s.PGSQL.5432"), maxConnections: 2 })
  await socket.start()
  const pool = new pg.Pool({
    host: socketDir,
    port: 5432,
    user: "postgres",
    database: "postgres",
    max: 1,
    idleTimeoutMillis: 0
  })
  return {
    pool,
    close: async () => {
      await pool.end()
      await socket.stop()
      await rm(socketDir, { recursive: true, force: true })
      await db.close()
    }
  }
}

const { pool, close } = await openPool()

// The schema name is checked above to be a plain identifier: the only text put into SQL here.
await pool.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`)
await pool.query(decisionsTable(schema))
await pool.query(`CREATE INDEX IF NOT EXISTS decisions_newest ON ${schema}.decisions (organization_id, id DESC)`)
await pool.query(`CREATE TABLE IF NOT EXISTS ${schema}.events (
  service text COLLATE "C" NOT NULL,
  id text COLLATE "C" NOT NULL,
  data jsonb NOT NULL,
  received_at timestamptz NOT NULL,
  PRIMARY KEY (service, id)
)`)
await pool.query(`CREATE TABLE IF NOT EXISTS ${schema}.tasks (
  seq bigserial PRIMARY KEY,
  id text COLLATE "C" NOT NULL UNIQUE,
  owner text NOT NULL,
  triage text NOT NULL,
  fields jsonb NOT NULL
)`)
await pool.query(`CREATE INDEX IF NOT EXISTS tasks_owner ON ${schema}.tasks (owner, seq DESC)`)

const sql = {
  insertDecision: `INSERT INTO ${schema}.decisions (id, organization_id, role_slug, status, created_at, doc)
    VALUES ($1, $2, $3, 'pending', $4, $5)`,
  getDecision: `SELECT doc FROM ${schema}.decisions WHERE id = $1`,
  inbox: `SELECT doc FROM ${schema}.decisions WHERE organization_id = $1 AND role_slug = $2
    ORDER BY id DESC LIMIT 25`,
  insertEvent: `INSERT INTO ${schema}.events (service, id, data, received_at) VALUES ($1, $2, $3, $4)
    ON CONFLICT DO NOTHING RETURNING id`,
  insertTask: `INSERT INTO ${schema}.tasks (id, owner, triage, fields) VALUES ($1, $2, 'New', $3)`,
  listTasks: `SELECT fields FROM ${schema}.tasks WHERE owner = $1 AND triage = 'New' ORDER BY seq DESC`
}

const readBody = (request: IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks)))
    request.on("error", reject)
  })

const send = (response: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  response.end(text)
}

const header = (request: IncomingMessage, name: string) => {
  const value = request.headers[name]
  return typeof value === "string" ? value : undefined
}

/** `v1=<hex HMAC-SHA256 of "<timestamp>.<raw body>">`, within 300 s, compared in constant time. */
const signed = (request: IncomingMessage, body: Buffer) => {
  const timestamp = header(request, "x-platform-timestamp")
  const signature = header(request, "x-platform-signature")
  if (timestamp === undefined || signature === undefined || !/^\d{1,12}$/.test(timestamp)) return false
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false
  const expected = createHmac("sha256", signingKey).update(`${timestamp}.`).update(body).digest()
  const hex = /^v1=([0-9a-f]{64})$/.exec(signature)?.[1]
  return hex !== undefined && timingSafeEqual(Buffer.from(hex, "hex"), expected)
}

const handle = async (request: IncomingMessage, response: ServerResponse) => {
  const url = new URL(request.url ?? "/", "http://baseline")
  const path = url.pathname
  if (request.method === "GET" && path === "/ready") return send(response, 200, { data: { status: "ready" } })
  if (request.method === "POST" && path === "/decisions") {
    const input = JSON.parse((await readBody(request)).toString("utf8"))
    const now = new Date().toISOString()
    const decision = { ...input, id: ulid(), organizationId: url.searchParams.get("org"), status: "pending" }
    await pool.query(sql.insertDecision, [decision.id, decision.organizationId, input.roleSlug, now, decision])
    return send(response, 201, { data: { decision } })
  }
  if (request.method === "GET" && path.startsWith("/decisions/")) {
    const { rows } = await pool.query(sql.getDecision, [path.slice("/decisions/".length)])
    return rows[0] === undefined
      ? send(response, 404, { error: { code: "NOT_FOUND" } })
      : send(response, 200, { data: rows[0].doc })
  }
  if (request.method === "GET" && path === "/inbox") {
    const { rows } = await pool.query(sql.inbox, [url.searchParams.get("org"), url.searchParams.get("role")])
    return send(response, 200, { data: { items: rows.map((row) => row.doc), nextCursor: null } })
  }
  if (request.method === "POST" && path === "/events") {
    const body = await readBody(request)
    if (!signed(request, body)) return send(response, 401, { error: { code: "UNAUTHORIZED" } })
    const event = JSON.parse(body.toString("utf8"))
    const { rows } = await pool.query(sql.insertEvent, [event.service, event.id, event, new Date().toISOString()])
    return send(response, rows.length === 1 ? 202 : 200, { data: { id: event.id } })
  }
  if (request.method === "POST" && path === "/tasks") {
    const fields = JSON.parse((await readBody(request)).toString("utf8"))
    const id = `rec${ulid()}`
    await pool.query(sql.insertTask, [id, url.searchParams.get("owner"), fields])
    return send(response, 201, { task: { id, ...fields } })
  }
  if (request.method === "GET" && path === "/tasks") {
    const { rows } = await pool.query(sql.listTasks, [url.searchParams.get("owner")])
    return send(response, 200, { tasks: rows.map((row) => row.fields) })
  }
  send(response, 404, { error: { code: "NOT_FOUND" } })
}

const server = createServer((request, response) => {
  handle(request, response).catch((error) => {
    process.stderr.write(`baseline: ${String(error)}\n`)
    if (!response.headersSent) send(response, 500, { error: { code: "INTERNAL_ERROR" } })
  })
})
server.keepAliveTimeout = 30_000
server.listen(port, "127.0.0.1", () => process.stdout.write(`baseline listening on ${port}\n`))

const shutdown = () => {
  server.close()
  server.closeAllConnections()
  close().then(
    () => process.exit(0),
    () => process.exit(1)
  )
}
process.once("SIGTERM", shutdown)
process.once("SIGINT", shutdown)
