import { afterEach, assert, describe, it } from "vitest"
import { startServer, tempDataDir, type RunningServer, runSeed } from "../support/ServerProcess.ts"

const running: Array<RunningServer> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop("SIGKILL")))
})

const keyOf = (output: string, email: string) => {
  const line = output.split("\n").find((l) => l.includes(email))
  const key = line?.match(/tsk_[A-Za-z0-9_-]{43}/)?.[0]
  if (key === undefined) throw new Error(`no key for ${email} in:\n${output}`)
  return key
}

describe("the task inbox in the bundled server (a real process, the embedded default)", () => {
  it("npm run seed loads the demo once; the server then serves it: triage a task, accept a proposal", async () => {
    const dataDir = tempDataDir()
    const first = await runSeed({ DATA_DIR: dataDir })
    assert.strictEqual(first.code, 0, first.output)
    assert.include(first.output, "Demo data loaded")
    const second = await runSeed({ DATA_DIR: dataDir })
    assert.include(second.output, "already")
    const key = keyOf(second.output, "alice@demo.example.com")

    const server = await startServer({ DATA_DIR: dataDir, TASKS_PUBLIC_URL: "https://tasks.demo.example.com/" })
    running.push(server)
    const base = `http://127.0.0.1:${server.ports.tasks}`
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      return { status: response.status, json: (await response.json()) as any }
    }
    assert.strictEqual((await fetch(`${base}/health`)).status, 200)
    const inbox = (await call("GET", "/api/tasks")).json.tasks
    assert.lengthOf(inbox, 3)
    assert.match(inbox[0].linkToTaskInterface, /^https:\/\/tasks\.demo\.example\.com\/tasks\/rec/)
    const project = (await call("GET", "/api/projects?q=acme")).json.projects[0]
    const accepted = await call("POST", `/api/tasks/${inbox[0].id}/accept`, { projectId: project.id })
    assert.strictEqual(accepted.json.task.triageStatus, "Accepted")
    assert.lengthOf((await call("GET", "/api/tasks")).json.tasks, 2)

    const proposals = (await call("GET", "/api/proposals")).json.proposals
    assert.isAtLeast(proposals.length, 3)
    const creation = proposals.find((p: any) => p.proposedChangesObj.action === "create_task")
    const done = await call("POST", `/api/proposals/${creation.id}/accept`)
    assert.strictEqual(done.status, 200)
    assert.strictEqual(done.json.task.title, creation.proposedChangesObj.title)
    assert.lengthOf((await call("GET", "/api/proposals")).json.proposals, proposals.length - 1)
  }, 120_000)

  it("accepts operator machine keys from TASKS_MACHINE_KEYS", async () => {
    const machineKey = "ops-machine-key-0123456789abcdef"
    const server = await startServer({
      DATA_DIR: tempDataDir(),
      TASKS_MACHINE_KEYS: `${machineKey}:ops@example.com:Ops Bot`
    })
    running.push(server)
    const created = await fetch(`http://127.0.0.1:${server.ports.tasks}/api/tasks`, {
      method: "POST",
      headers: { "x-api-key": machineKey, "content-type": "application/json" },
      body: JSON.stringify({ title: "From the operator" })
    })
    assert.strictEqual(created.status, 201)
    const { task } = (await created.json()) as any
    assert.deepInclude(task.requestedBy, { email: "ops@example.com", name: "Ops Bot" })
  }, 60_000)

  it("refuses to start on a malformed TASKS_MACHINE_KEYS, without printing the key", async () => {
    const server = await startServer(
      { DATA_DIR: tempDataDir(), TASKS_MACHINE_KEYS: "secret-key-0123456789abcdef:not-an-email:Ops" },
      { waitReady: false }
    )
    running.push(server)
    const code = await server.exited
    assert.notStrictEqual(code, 0)
    assert.include(server.output(), "TASKS_MACHINE_KEYS")
    assert.notInclude(server.output(), "secret-key-0123456789abcdef")
  }, 60_000)
})
