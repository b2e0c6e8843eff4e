import { readFileSync } from "node:fs"
import { createServer, type Server } from "node:net"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "vitest"
import { freePort, startServer, tempDataDir, type RunningServer } from "../support/ServerProcess.ts"

const running: Array<RunningServer> = []
const held: Array<Server> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop("SIGKILL")))
  await Promise.all(held.splice(0).map((s) => new Promise((resolve) => s.close(resolve))))
})

const start = async (env: Record<string, string | undefined>, options?: { waitReady?: boolean }) => {
  const server = await startServer(env, options)
  running.push(server)
  return server
}

/** Waits until the server's output matches (its log lines are written once per turn of its event loop). */
const outputMatching = async (server: RunningServer, pattern: RegExp) => {
  for (let i = 0; i < 100 && !pattern.test(server.output()); i++) await new Promise((r) => setTimeout(r, 100))
  const match = pattern.exec(server.output())
  assert.isNotNull(match, server.output())
  return match!
}

/** A port held open by this test, as another program would. */
const holdPort = async () => {
  const port = await freePort()
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  held.push(server)
  return port
}

describe("what the console shows a person starting the server (a real process)", () => {
  it("says where to go once all three listen, prints the development sign-in link plainly, and keeps request lines out of sight", async () => {
    const dataDir = tempDataDir()
    const server = await start({ DATA_DIR: dataDir })
    const { hub, decisions, tasks } = server.ports
    const banner = await outputMatching(server, /^ready: open (\S+) .*\n((?: {2}.*\n)+)/m)
    assert.strictEqual(banner[1], `http://127.0.0.1:${hub}/`)
    assert.include(banner[2], `http://127.0.0.1:${decisions}/`)
    assert.include(banner[2], `http://127.0.0.1:${tasks}/`)
    assert.include(server.output(), "development secrets generated: ")
    assert.notInclude(server.output(), "development secrets read")

    // A person of the directory asks for a sign-in link: with no mail server, it is printed on a line of its own.
    const secrets = JSON.parse(readFileSync(join(dataDir, "dev-secrets.json"), "utf8")) as Record<string, string>
    const created = await fetch(`http://127.0.0.1:${hub}/api/v1/admin/users`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${secrets["HUB_ADMIN_KEY"]}` },
      body: JSON.stringify({ email: "ada@example.com", name: "Ada" })
    })
    assert.strictEqual(created.status, 201)
    for (let i = 0; i < 3; i++) await fetch(`http://127.0.0.1:${hub}/api/v1/health`)
    const asked = await fetch(`http://127.0.0.1:${hub}/auth/email`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "ada@example.com" })
    })
    assert.strictEqual(asked.status, 202)
    const link = await outputMatching(server, /^.*\/auth\/email\/callback\?token=.*$/m)
    assert.match(link[0], /^\s*http:\/\/127\.0\.0\.1:\d+\/auth\/email\/callback\?token=[A-Za-z0-9_%-]+\s*$/)
    // The link is bound to the browser that asked (its sign-in cookie): opened with it, it signs in at once.
    const nonce = (asked.headers.get("set-cookie") ?? "").split(";")[0]!
    assert.include(nonce, "hub_sign_in=")
    const landed = await fetch(link[0].trim(), { redirect: "manual", headers: { cookie: nonce } })
    assert.strictEqual(landed.status, 303)
    assert.include(landed.headers.get("set-cookie") ?? "", "hub_session=")
    // Requests are logged at debug level in development: none of the answers above wrote a line.
    assert.notInclude(server.output(), "Sent HTTP response")

    // A restart reads the secrets it kept: it says so, and generates none.
    await server.stop("SIGTERM")
    const again = await start({ DATA_DIR: dataDir, HUB_PORT: String(hub) })
    await outputMatching(again, /^ready: open /m)
    assert.include(again.output(), "development secrets read from ")
    assert.notInclude(again.output(), "development secrets generated")
  }, 120_000)

  it("refuses a port in use in one sentence naming its setting, before any service listens", async () => {
    const port = await holdPort()
    for (const setting of ["HUB_PORT", "TASKS_PORT"]) {
      const server = await start({ DATA_DIR: tempDataDir(), [setting]: String(port) }, { waitReady: false })
      assert.strictEqual(await server.exited, 1, server.output())
      const output = server.output()
      assert.include(output, `Port ${port} on 127.0.0.1 is already in use: stop what listens there, or set ${setting}`)
      assert.notInclude(output, "    at ")
      assert.notInclude(output, "Listening on")
      assert.notInclude(output, "database:")
    }
  }, 60_000)

  it("refuses two settings naming the same port", async () => {
    const port = await freePort()
    const server = await start(
      { DATA_DIR: tempDataDir(), HUB_PORT: String(port), DECISIONS_PORT: String(port) },
      { waitReady: false }
    )
    assert.strictEqual(await server.exited, 1)
    assert.include(server.output(), `HUB_PORT and DECISIONS_PORT are both ${port}: give each its own port.`)
    assert.notInclude(server.output(), "Listening on")
  }, 60_000)
})

const serverUrl = process.env["DATABASE_URL"]
const ci = process.env["CI"] === "true"
/** Needs a Postgres server (`DATABASE_URL`): required under CI; elsewhere run when one is configured. */
const databases = serverUrl !== undefined && serverUrl !== "" ? [serverUrl] : ci ? [""] : []

for (const databaseServer of databases) {
  describe("a start on a Postgres server (a real process)", () => {
    it("refuses a database that does not exist, saying how to create it, before any service listens", async () => {
      if (databaseServer === "") throw new Error("CI=true requires DATABASE_URL (a Postgres server)")
      const name = `missing_${Date.now()}`
      const url = new URL(databaseServer)
      url.pathname = `/${name}`
      const server = await start({ DATA_DIR: tempDataDir(), DATABASE_URL: url.toString() }, { waitReady: false })
      assert.strictEqual(await server.exited, 1, server.output())
      const output = server.output()
      assert.include(output, `The database ${name} does not exist on the Postgres server of DATABASE_URL`)
      assert.include(output, `createdb ${name}`)
      assert.notInclude(output, "    at ")
      assert.notInclude(output, "Listening on")
      for (const port of Object.values(server.ports)) {
        const answered = await fetch(`http://127.0.0.1:${port}/api/v1/health`).then(
          () => true,
          () => false
        )
        assert.isFalse(answered)
      }
    }, 60_000)
  })
}
