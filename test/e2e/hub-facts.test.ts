import { randomUUID } from "node:crypto"
import { spawn } from "node:child_process"
import { createServer, request as httpRequest, type Server } from "node:http"
import { afterEach, assert, describe, it } from "vitest"
import { acme, platform, until, type Platform } from "../support/DecisionsPlatform.ts"
import { freshPostgres, serverDatabases } from "../support/ServerDatabases.ts"
import { freePort, startServer, tempDataDir, type RunningServer } from "../support/ServerProcess.ts"

/**
 * Facts from the hub to the services (docs/hub.md, "Facts"), on the bundled server: an organization the
 * operator suspends (archives) has its caller keys and identity tokens refused by the decisions service and
 * its people's keys refused by the task inbox, once the hub's `organization.status.changed` facts reach
 * them; both work again when it is active. A fact outlives the service being unreachable: it is retried
 * until accepted.
 */

const running: Array<RunningServer> = []
const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop("SIGKILL")))
  await Promise.all(cleanups.splice(0).map((f) => f()))
})

/** A database of its own on the Postgres server, dropped after the test. */
const freshDatabase = async (serverUrl: string) => {
  const database = await freshPostgres(serverUrl, "facts")
  cleanups.push(database.drop)
  return database.url
}

/** A busy machine can take more than the default minute to start the server. */
const slowStart = { readyWithinMillis: 240_000 }

const machineKey = `machine-${randomUUID()}`

const environment = async (serverUrl: string | undefined, extra: Record<string, string> = {}) => ({
  DATA_DIR: tempDataDir(),
  ...(serverUrl === undefined ? {} : { DATABASE_URL: await freshDatabase(serverUrl) }),
  HUB_WORKER_POLL_MS: "100",
  HUB_FACT_RETRY_SCHEDULE: "0.5",
  // The task inbox's operator key acts for Ann, a member of Acme.
  TASKS_MACHINE_KEYS: `${machineKey}:ann@acme.test:Ann`,
  LOG_LEVEL: "Error",
  ...extra
})

const status = async (url: string, headers: Record<string, string>) => {
  const response = await fetch(url, { headers })
  await response.body?.cancel()
  return response.status
}

/** The decisions caller plane, its workspace plane and the task inbox, as Acme's people use them. */
const acmeCalls = (server: RunningServer, p: Platform, key: string, token: string) => ({
  caller: () =>
    status(`http://127.0.0.1:${server.ports.decisions}/api/v1/decisions`, { authorization: `Bearer ${key}` }),
  workspace: () =>
    status(`http://127.0.0.1:${server.ports.decisions}/api/v1/workspace/decisions`, {
      "x-decisions-api-key": p.secrets["DECISIONS_API_KEY"]!,
      "x-workspace-token": token
    }),
  tasks: () => status(`http://127.0.0.1:${server.ports.tasks}/api/tasks`, { "x-api-key": machineKey })
})

/** Both services live at the hub: their conformance checks read their manifests (and the facts they consume). */
const servicesLive = (p: Platform) =>
  until(
    "decisions and the task inbox live at the hub",
    async () => {
      const answers = await Promise.all(
        ["decisions", "tasks"].map((id) => p.hubAdmin("GET", `/api/v1/admin/services/${id}`))
      )
      const live = answers.every((a) => a.json?.data?.service?.status === "live")
      return live ? answers.map((a) => a.json.data.service.consumesFacts) : undefined
    },
    120_000
  )

const setArchived = async (p: Platform, orgId: string, archived: boolean) => {
  const answer = await p.hubAdmin("PATCH", `/api/v1/admin/orgs/${orgId}`, { archived })
  assert.strictEqual(answer.status, 200)
  assert.strictEqual(answer.json.data.org.status, archived ? "archived" : "active")
}

/** The operator CLI (`npm run cli`) against the running hub, with the server's data directory (its admin key). */
const cli = (dataDir: string, args: ReadonlyArray<string>) =>
  new Promise<{ readonly code: number | null; readonly output: string }>((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "apps/server/cli.ts", ...args], {
      cwd: process.cwd(),
      env: { PATH: process.env["PATH"], HOME: process.env["HOME"], DATA_DIR: dataDir },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.on("data", (chunk) => (output += chunk))
    child.stderr.on("data", (chunk) => (output += chunk))
    child.once("exit", (code) => resolve({ code, output }))
  })

const allAre = (expected: number, calls: ReadonlyArray<() => Promise<number>>) => async () => {
  const statuses = await Promise.all(calls.map((call) => call()))
  return statuses.every((s) => s === expected) ? statuses : undefined
}

describe.each(serverDatabases)("facts from the hub to the services ($name)", ({ url: serverUrl }) => {
  it("a suspended organization's keys and tokens are refused by decisions and the task inbox until it is active", async () => {
    const env = await environment(serverUrl)
    const server = await startServer(env, slowStart)
    running.push(server)
    const p = await platform(server, env.DATA_DIR)
    // Each service's manifest declares the fact; the operator sees it.
    assert.deepStrictEqual(await servicesLive(p), [["organization.status.changed"], ["organization.status.changed"]])
    const { orgId, key } = await acme(p)
    const calls = acmeCalls(server, p, key, await p.token("ann@acme.test", orgId, "MEMBER"))
    const all = [calls.caller, calls.workspace, calls.tasks]
    assert.deepStrictEqual(await allAre(200, all)(), [200, 200, 200])

    await setArchived(p, orgId, true)
    assert.deepStrictEqual(await until("Acme refused everywhere", allAre(401, all)), [401, 401, 401])

    // Reactivated with the CLI, which calls the same operator route.
    const hub = `http://127.0.0.1:${server.ports.hub}`
    const reactivated = await cli(env.DATA_DIR, ["org", "update", "--org", orgId, "--archived", "false", "--hub", hub])
    assert.strictEqual(reactivated.code, 0, reactivated.output)
    assert.deepStrictEqual(await until("Acme served again", allAre(200, all)), [200, 200, 200])

    // The hub publishes the whole contract: its routes and the uniform service contract, facts included.
    const document = (await (await fetch(`http://127.0.0.1:${server.ports.hub}/api/v1/openapi`)).json()) as {
      info: { version: string }
      paths: Record<string, unknown>
    }
    assert.strictEqual(document.info.version, "1.0.0")
    for (const path of ["/api/v1/event-catalog", "/api/v1/subject-context", "/api/v1/facts", "/api/v1/summary"]) {
      assert.property(document.paths, path)
    }
  }, 360_000)
})

/**
 * A stand-in in front of the decisions service: it passes every request through while up, and answers 503 to
 * the hub's facts while down (counting them).
 */
const decisionsProxy = async (target: number) => {
  const state = { up: true, refusedFacts: 0 }
  const proxy: Server = createServer((incoming, outgoing) => {
    if (!state.up && incoming.url?.startsWith("/api/v1/facts")) {
      state.refusedFacts++
      incoming.resume()
      outgoing.writeHead(503, { "content-type": "application/json" })
      outgoing.end(JSON.stringify({ error: { code: "UNAVAILABLE", message: "Down for maintenance." } }))
      return
    }
    const forward = httpRequest(
      { host: "127.0.0.1", port: target, method: incoming.method, path: incoming.url, headers: incoming.headers },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(outgoing)
      }
    )
    forward.on("error", () => outgoing.destroy())
    incoming.pipe(forward)
  })
  const port = await freePort()
  await new Promise<void>((resolve) => proxy.listen(port, "127.0.0.1", resolve))
  cleanups.push(() => new Promise<void>((resolve) => proxy.close(() => resolve())))
  return { state, url: `http://127.0.0.1:${port}` }
}

describe("a fact while its service is down", () => {
  it("is retried until the service accepts it", async () => {
    const decisionsPort = await freePort()
    const proxy = await decisionsProxy(decisionsPort)
    const env = await environment(undefined, { DECISIONS_PORT: String(decisionsPort), DECISIONS_URL: proxy.url })
    const server = await startServer(env, slowStart)
    running.push(server)
    const p = await platform(server, env.DATA_DIR)
    await servicesLive(p)
    const { orgId, key } = await acme(p)
    const calls = acmeCalls(server, p, key, await p.token("ann@acme.test", orgId, "MEMBER"))

    proxy.state.up = false
    await setArchived(p, orgId, true)
    // The task inbox hears at once; decisions is asked again and again, and serves Acme meanwhile.
    await until("the task inbox refuses Acme", allAre(401, [calls.tasks]))
    await until("the fact refused by decisions more than once", async () =>
      proxy.state.refusedFacts >= 6 ? true : undefined
    )
    assert.strictEqual(await calls.caller(), 200)

    proxy.state.up = true
    await until("decisions refuses Acme", allAre(401, [calls.caller, calls.workspace]))
  }, 360_000)
})
