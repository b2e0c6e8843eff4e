import { afterEach, assert, describe, it } from "vitest"
import { startServer, tempDataDir, type RunningServer } from "../support/ServerProcess.ts"

const running: Array<RunningServer> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop("SIGKILL")))
})

const adminKey = "hub-admin-key-for-the-npm-start-test"
const machineKey = "ops-machine-key-0123456789abcdef"

const call = async (port: number, path: string, headers: Record<string, string> = {}) => {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { headers })
  const text = await response.text()
  return { status: response.status, text, json: text.length > 0 ? (JSON.parse(text) as any) : undefined }
}

const until = async (what: string, attempt: () => Promise<boolean>) => {
  const deadline = Date.now() + 30_000
  while (!(await attempt())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe("npm start (scripts/start.mjs: the server compiled into one bundle)", () => {
  it("serves the three services from the bundle: ready, their data routes, first-party services live, a clean exit on SIGTERM", async () => {
    const server = await startServer(
      {
        DATA_DIR: tempDataDir(),
        LOG_FORMAT: "json",
        HUB_ADMIN_KEY: adminKey,
        TASKS_MACHINE_KEYS: `${machineKey}:ops@acme.test:Ops Bot`
      },
      { compiled: true }
    )
    running.push(server)
    const { hub, decisions, tasks } = server.ports
    for (const port of [hub, decisions, tasks]) {
      await until(`ready on ${port}`, async () => (await call(port, "/api/v1/ready")).status === 200)
      const openapi = await call(port, "/api/v1/openapi?format=json")
      assert.strictEqual(openapi.status, 200)
      assert.match(openapi.json.openapi, /^3\./)
    }
    const tasksList = await call(tasks, "/api/tasks", { "x-api-key": machineKey })
    assert.strictEqual(tasksList.status, 200, tasksList.text)
    assert.isArray(tasksList.json.tasks)
    const unauthorized = await call(decisions, "/api/v1/decisions/dec_missing", { authorization: "Bearer wrong" })
    assert.strictEqual(unauthorized.status, 401)
    // The hub checks both first-party services over HTTP (signed tokens, probes) and promotes them.
    await until("both first-party services live", async () => {
      const services = await call(hub, "/api/v1/admin/services", { authorization: `Bearer ${adminKey}` })
      return (
        services.status === 200 &&
        ["decisions", "tasks"].every((id) =>
          services.json.data.services.some((service: any) => service.id === id && service.status === "live")
        )
      )
    })
    assert.strictEqual(await server.stop("SIGTERM"), 0)
  }, 120_000)
})
