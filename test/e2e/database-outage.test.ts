import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { SqlError } from "effect/sql"
import { randomBytes } from "node:crypto"
import { createServer, connect, type Socket } from "node:net"
import pg from "pg"
import type { ErrorRenderer } from "../../adapters/http/ErrorResponse.ts"
import { failureResponse } from "../../adapters/http/ErrorResponse.ts"
import { serviceRoutes } from "../../adapters/http/ServiceHttp.ts"
import { tasksFailureResponse, tasksRenderer } from "../../adapters/http/tasks/TasksErrors.ts"
import { Readiness, Unavailable } from "../../core/kernel/index.ts"
import { request, serveForTest } from "../support/Http.ts"
import { startServer, tempDataDir, type RunningServer } from "../support/ServerProcess.ts"
import { mintToken } from "../support/Tokens.ts"

/** What the database driver fails with when it cannot connect, words of the vendor and the machine included. */
const connectionFailure = () =>
  new SqlError.SqlError({
    reason: new SqlError.ConnectionError({
      cause: new Error("connect ECONNREFUSED 127.0.0.1:5432"),
      message: "PgConnection: Failed to connect to postgres",
      operation: "connect"
    })
  })

class Probe extends HttpApiGroup.make("probe").add(
  HttpApiEndpoint.get("lost", "/lost", { success: Schema.Struct({}) }),
  HttpApiEndpoint.get("crash", "/crash", { success: Schema.Struct({}) }),
  HttpApiEndpoint.get("typedLost", "/typed-lost", { success: Schema.Struct({}) }),
  HttpApiEndpoint.get("typedLostTasks", "/typed-lost-tasks", { success: Schema.Struct({}) })
) {}

class ProbeApi extends HttpApi.make("probe").add(Probe) {}

const probeHandlers = HttpApiBuilder.group(ProbeApi, "probe", (handlers) =>
  Effect.succeed(
    handlers.handleAll({
      // Stores turn SQL failures into defects; a handler may also meet one as a typed error.
      lost: () => Effect.die(connectionFailure()),
      crash: () => Effect.die(new Error("a bug, at /srv/app/thing.ts:12")),
      typedLost: () => failureResponse(connectionFailure(), "hub"),
      typedLostTasks: () => tasksFailureResponse(connectionFailure())
    })
  )
)

const serveProbe = (ping: Effect.Effect<void, Unavailable>, render?: ErrorRenderer) =>
  serveForTest(
    serviceRoutes({
      api: ProbeApi,
      handlers: probeHandlers,
      errors: { dialect: "hub", maxBodyBytes: 1024, render }
    }).pipe(Layer.provide(Layer.succeed(Readiness)({ check: ping })))
  )

const down = Effect.fail(new Unavailable({ message: "The database is not reachable." }))

describe("what a service answers when its database cannot be reached", () => {
  it.live(
    "a connection failure is 503 UNAVAILABLE, even when the database answers again by the time of the answer",
    () =>
      Effect.gen(function* () {
        const { baseUrl } = yield* serveProbe(Effect.void)
        for (const path of ["/lost", "/typed-lost"]) {
          const answer = yield* request(`${baseUrl}${path}`)
          assert.strictEqual(answer.status, 503, path)
          assert.deepStrictEqual(answer.json, {
            error: { code: "UNAVAILABLE", message: "The service is temporarily unavailable. Retry later." }
          })
        }
      }).pipe(Effect.scoped)
  )

  it.live("any other unexpected failure is 503 UNAVAILABLE while the database does not answer its ping", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serveProbe(down)
      const answer = yield* request(`${baseUrl}/crash`)
      assert.strictEqual(answer.status, 503)
      assert.strictEqual(answer.json.error.code, "UNAVAILABLE")
    }).pipe(Effect.scoped)
  )

  it.live("an unexpected failure while the database answers is a bug: 500 INTERNAL_ERROR without detail", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serveProbe(Effect.void)
      const answer = yield* request(`${baseUrl}/crash`)
      assert.strictEqual(answer.status, 500)
      assert.deepStrictEqual(answer.json, {
        error: { code: "INTERNAL_ERROR", message: "Something went wrong on our side." }
      })
    }).pipe(Effect.scoped)
  )

  it.live("the task inbox answers an outage 502 with its {error} body, as when its store fails", () =>
    Effect.gen(function* () {
      const store = { error: "The record store is not responding. Retry later." }
      const reachable = yield* serveProbe(Effect.void, tasksRenderer)
      for (const path of ["/lost", "/typed-lost-tasks"]) {
        const answer = yield* request(`${reachable.baseUrl}${path}`)
        assert.strictEqual(answer.status, 502, path)
        assert.deepStrictEqual(answer.json, store)
      }
      const crash = yield* request(`${reachable.baseUrl}/crash`)
      assert.strictEqual(crash.status, 500)
      assert.deepStrictEqual(crash.json, { error: "Something went wrong on our side" })
      const unreachable = yield* serveProbe(down, tasksRenderer)
      const answer = yield* request(`${unreachable.baseUrl}/crash`)
      assert.strictEqual(answer.status, 502)
      assert.deepStrictEqual(answer.json, store)
    }).pipe(Effect.scoped)
  )
})

/**
 * A database outage, for real: the server reaches its Postgres server through a TCP proxy that the test
 * cuts (every open connection dropped, every new one closed at once) and restores, without restarting it.
 */
const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A loopback TCP proxy to `target`; `cut` drops every connection and refuses new ones until `restore`. */
const tcpProxy = async (target: { readonly host: string; readonly port: number }) => {
  const open = new Set<Socket>()
  let cut = false
  const server = createServer((client) => {
    if (cut) {
      client.destroy()
      return
    }
    const upstream = connect(target.port, target.host)
    const drop = () => {
      client.destroy()
      upstream.destroy()
      open.delete(client)
      open.delete(upstream)
    }
    for (const socket of [client, upstream]) {
      open.add(socket)
      socket.on("error", drop)
      socket.on("close", drop)
    }
    client.pipe(upstream)
    upstream.pipe(client)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("the proxy has no port")
  return {
    port: address.port,
    cut: () => {
      cut = true
      for (const socket of open) socket.destroy()
    },
    restore: () => {
      cut = false
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy()
        server.close(() => resolve())
      })
  }
}

/** A database of its own on the Postgres server, dropped afterwards. */
const freshDatabase = async (serverUrl: string) => {
  const name = `hitl_outage_${randomBytes(5).toString("hex")}`
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  cleanups.push(async () => {
    const client = new pg.Client({ connectionString: serverUrl })
    await client.connect()
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await client.end()
  })
  return name
}

const secret = () => randomBytes(24).toString("hex")

const call = async (port: number, method: string, path: string, headers: Record<string, string>, body?: unknown) => {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, text, json: text.length > 0 ? (JSON.parse(text) as any) : undefined }
}

/** A request as a browser or an OpenID client makes it: redirects are answers, the body is any text. */
const browse = async (
  port: number,
  method: string,
  path: string,
  init: { readonly headers?: Record<string, string>; readonly body?: string } = {}
) => {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { method, redirect: "manual", ...init })
  return { status: response.status, text: await response.text(), location: response.headers.get("location") }
}

const tasksClientSecret = "tasks-client-secret-for-the-outage-test"

/** What every route of the hub answers while its database cannot be reached. */
const outageAnswer = {
  error: { code: "UNAVAILABLE", message: "The service is temporarily unavailable. Retry later." }
}

/** Words of the database, its driver or the machine that an answer must never show. */
const leaks = /postgres|pglite|sql|econn|socket|database_url|5432|127\.0\.0\.1:\d|\.ts:\d|\.js:\d/i

const waitFor = async (what: string, attempt: () => Promise<boolean>) => {
  const deadline = Date.now() + 30_000
  while (!(await attempt())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const serverUrl = process.env["DATABASE_URL"]
const ci = process.env["CI"] === "true"

/**
 * Needs a Postgres server (`DATABASE_URL`): required under CI, where its absence fails the suite; elsewhere
 * the suite runs when one is configured, as the other Postgres suites do.
 */
const databases = serverUrl !== undefined && serverUrl !== "" ? [serverUrl] : ci ? [""] : []

for (const databaseServer of databases) {
  describe("a database outage (a real process behind a TCP proxy to Postgres)", () => {
    it("answers 503 UNAVAILABLE (the task inbox 502) while the database is cut off, and serves again once it is back, without a restart", async () => {
      if (databaseServer === "") throw new Error("CI=true requires DATABASE_URL (a Postgres server)")
      const upstream = new URL(databaseServer)
      const proxy = await tcpProxy({ host: upstream.hostname, port: Number(upstream.port || 5432) })
      cleanups.push(proxy.close)
      const proxied = new URL(databaseServer)
      proxied.hostname = "127.0.0.1"
      proxied.port = String(proxy.port)
      proxied.pathname = `/${await freshDatabase(databaseServer)}`

      const keys = {
        HUB_ADMIN_KEY: secret(),
        HUB_SECRETS_KEY: secret(),
        DECISIONS_API_KEY: secret(),
        DECISIONS_EMBED_KEY: secret(),
        DECISIONS_SECRETS_KEY: secret(),
        TASKS_API_KEY: secret(),
        TASKS_SIGNING_KEY: secret(),
        TASKS_SECRETS_KEY: secret()
      }
      const machineKey = "ops-machine-key-0123456789abcdef"
      const server: RunningServer = await startServer({
        ...keys,
        DATA_DIR: tempDataDir(),
        DATABASE_URL: proxied.toString(),
        LOG_FORMAT: "json",
        TASKS_MACHINE_KEYS: `${machineKey}:ops@acme.test:Ops Bot`,
        TASKS_OIDC_CLIENT_SECRET: tasksClientSecret
      })
      cleanups.push(() => server.stop("SIGKILL"))
      const { hub, decisions, tasks } = server.ports
      const ready = (port: number) => call(port, "GET", "/api/v1/ready", {})

      const workspace = async (method: string, path: string, body: unknown) => {
        const token = await mintToken({
          key: keys.DECISIONS_EMBED_KEY,
          issuer: "platform-hub",
          audience: "decisions",
          email: "admin@acme.test",
          companyId: "acme",
          orgRole: "OWNER"
        })
        return call(
          decisions,
          method,
          path,
          { "x-decisions-api-key": keys.DECISIONS_API_KEY, "x-workspace-token": token },
          body
        )
      }
      assert.strictEqual((await workspace("POST", "/api/v1/workspace/roles", { slug: "ops", name: "Ops" })).status, 201)
      const callerKey = (await workspace("POST", "/api/v1/workspace/keys", { name: "agent" })).json.data
        .plaintext as string
      const caller = { authorization: `Bearer ${callerKey}` }
      const newDecision = { title: "Ship it?", roleSlug: "ops", options: [{ label: "Yes" }, { label: "No" }] }
      const create = () =>
        call(decisions, "POST", "/api/v1/decisions", { ...caller, "idempotency-key": secret() }, newDecision)
      const created = await create()
      assert.strictEqual(created.status, 201, created.text)
      const decisionId = created.json.data.decision.id as string

      const routes = {
        "a decision create": create,
        "a decision get": () => call(decisions, "GET", `/api/v1/decisions/${decisionId}`, caller),
        "a hub admin read": () =>
          call(hub, "GET", "/api/v1/admin/services", { authorization: `Bearer ${keys.HUB_ADMIN_KEY}` }),
        "a task list": () => call(tasks, "GET", "/api/tasks", { "x-api-key": machineKey })
      }

      // The hub's OpenID provider, as the task inbox's sign-in reaches it: its authorization request, the token
      // exchange of its client, and a sign-in's interaction.
      const login = await fetch(`http://127.0.0.1:${tasks}/auth/login`, { redirect: "manual" })
      const authorize = new URL(login.headers.get("location") ?? "")
      assert.deepStrictEqual([authorize.port, authorize.pathname], [String(hub), "/oidc/auth"], login.statusText)
      const openId = {
        "the OpenID authorization": () => browse(hub, "GET", `${authorize.pathname}${authorize.search}`),
        "the OpenID token exchange": () =>
          browse(hub, "POST", "/oidc/token", {
            headers: {
              authorization: `Basic ${Buffer.from(`tasks:${tasksClientSecret}`).toString("base64")}`,
              "content-type": "application/x-www-form-urlencoded"
            },
            body: new URLSearchParams({
              grant_type: "authorization_code",
              code: "a-code-never-issued",
              redirect_uri: authorize.searchParams.get("redirect_uri") ?? "",
              code_verifier: "a".repeat(43)
            }).toString()
          }),
        "an OpenID interaction": () => browse(hub, "GET", "/oidc/interaction/an-interaction-never-started")
      }

      proxy.cut()
      for (const [name, route] of Object.entries(openId)) {
        const answer = await route()
        assert.strictEqual(answer.status, 503, `${name}: ${answer.text}`)
        assert.deepStrictEqual(JSON.parse(answer.text), outageAnswer, name)
        assert.notMatch(answer.text, leaks, name)
      }
      // What needs no database is still served.
      assert.strictEqual((await browse(hub, "GET", "/.well-known/openid-configuration")).status, 200)
      for (const port of [hub, decisions, tasks]) {
        const answer = await ready(port)
        assert.strictEqual(answer.status, 503, answer.text)
        assert.strictEqual(answer.json.error.code, "UNAVAILABLE")
      }
      for (const [name, route] of Object.entries(routes)) {
        const answer = await route()
        if (name === "a task list") {
          assert.strictEqual(answer.status, 502, `${name}: ${answer.text}`)
          assert.deepStrictEqual(answer.json, { error: "The record store is not responding. Retry later." })
        } else {
          assert.strictEqual(answer.status, 503, `${name}: ${answer.text}`)
          assert.strictEqual(answer.json.error.code, "UNAVAILABLE", name)
        }
        assert.notMatch(answer.text, leaks, name)
      }

      proxy.restore()
      for (const port of [hub, decisions, tasks]) {
        await waitFor(`the service on ${port} to be ready again`, async () => (await ready(port)).status === 200)
      }
      const expected = { "a decision create": 201, "a decision get": 200, "a hub admin read": 200, "a task list": 200 }
      for (const [name, route] of Object.entries(routes)) {
        const answer = await route()
        assert.strictEqual(answer.status, expected[name as keyof typeof expected], `${name}: ${answer.text}`)
      }
      const signIn = await openId["the OpenID authorization"]()
      assert.strictEqual(signIn.status, 303, signIn.text)
      assert.match(signIn.location ?? "", /\/oidc\/interaction\//)
      const exchange = await openId["the OpenID token exchange"]()
      assert.deepStrictEqual([exchange.status, JSON.parse(exchange.text).error], [400, "invalid_grant"])
      assert.strictEqual((await openId["an OpenID interaction"]()).status, 400)
      assert.strictEqual(server.child.exitCode, null)
    }, 120_000)
  })
}
