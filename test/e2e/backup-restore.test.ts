import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "vitest"
import { freshPostgres } from "../support/ServerDatabases.ts"
import { startServer, tempDataDir, type RunningServer } from "../support/ServerProcess.ts"

/**
 * The backup docs/deploy.md describes: `pg_dump` of the platform's database while it runs, restored with
 * `pg_restore` into a new database, which a server then starts on and serves the same data from.
 */

const serverUrl = process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"

const cleanups: Array<() => Promise<unknown>> = []
const running: Array<RunningServer> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop("SIGKILL")))
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const adminKey = "hub-admin-key-for-the-backup-test"
const machineKey = "ops-machine-key-for-the-backup-test"

/** The same production-like secrets for both servers, as every instance of a deployment shares them. */
const settings = (databaseUrl: string) => ({
  DATABASE_URL: databaseUrl,
  DATA_DIR: tempDataDir(),
  LOG_FORMAT: "json",
  HUB_ADMIN_KEY: adminKey,
  HUB_SECRETS_KEY: "hub-secrets-key-for-the-backup-test",
  TASKS_SECRETS_KEY: "tasks-secrets-key-for-the-backup-test",
  TASKS_MACHINE_KEYS: `${machineKey}:ops@acme.test:Ops Bot`
})

const call = async (port: number, method: string, path: string, headers: Record<string, string>, body?: unknown) => {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, text, json: text.length > 0 ? (JSON.parse(text) as any) : undefined }
}

const run = (command: string, args: ReadonlyArray<string>) =>
  new Promise<void>((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"] })
    let errors = ""
    child.stderr.on("data", (chunk) => (errors += chunk))
    child.once("error", reject)
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${command} exited ${code}: ${errors}`))))
  })

describe("a backup of the platform's database (pg_dump, pg_restore)", () => {
  it("restores into a new database that a server starts on and reads the same data from", async () => {
    const original = await freshPostgres(serverUrl, "backup")
    cleanups.push(original.drop)
    const first = await startServer(settings(original.url))
    running.push(first)
    const hub = (method: string, path: string, body?: unknown) =>
      call(first.ports.hub, method, path, { authorization: `Bearer ${adminKey}` }, body)
    const org = await hub("POST", "/api/v1/admin/orgs", { name: "Acme", tier: "monthly" })
    assert.strictEqual(org.status, 201, org.text)
    const user = await hub("POST", "/api/v1/admin/users", { email: "ada@acme.test", name: "Ada" })
    assert.strictEqual(user.status, 201, user.text)
    const task = await call(first.ports.tasks, "POST", "/api/tasks", { "x-api-key": machineKey }, { title: "Plan Q4" })
    assert.strictEqual(task.status, 201, task.text)

    // Dumped while the server runs: pg_dump reads one consistent snapshot of every schema.
    const dumps = mkdtempSync(join(tmpdir(), "hitl-backup-"))
    cleanups.push(async () => rmSync(dumps, { recursive: true, force: true }))
    const dump = join(dumps, "platform.dump")
    await run("pg_dump", ["--format=custom", "--no-owner", `--file=${dump}`, `--dbname=${original.url}`])
    await first.stop("SIGTERM")

    const restored = await freshPostgres(serverUrl, "restored")
    cleanups.push(restored.drop)
    await run("pg_restore", ["--no-owner", "--exit-on-error", `--dbname=${restored.url}`, dump])

    const second = await startServer(settings(restored.url))
    running.push(second)
    // Every migration was in the dump: the restored database needs none.
    assert.notMatch(second.output(), /applied migration/)
    const readOrg = await call(second.ports.hub, "GET", `/api/v1/admin/orgs/${org.json.data.org.id}`, {
      authorization: `Bearer ${adminKey}`
    })
    assert.strictEqual(readOrg.status, 200, readOrg.text)
    assert.deepStrictEqual(readOrg.json.data.org, org.json.data.org)
    const readTask = await call(second.ports.tasks, "GET", `/api/tasks/${task.json.task.id}`, {
      "x-api-key": machineKey
    })
    assert.strictEqual(readTask.status, 200, readTask.text)
    assert.strictEqual(readTask.json.task.title, "Plan Q4")
    // And it keeps working: a new write on the restored database.
    const another = await call(second.ports.tasks, "POST", "/api/tasks", { "x-api-key": machineKey }, { title: "Next" })
    assert.strictEqual(another.status, 201, another.text)
    assert.strictEqual(await second.stop("SIGTERM"), 0)
  }, 120_000)
})
