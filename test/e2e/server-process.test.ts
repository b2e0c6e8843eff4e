import { Validator } from "@seriousme/openapi-schema-validator"
import { readFileSync } from "node:fs"
import { parse } from "yaml"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "vitest"
import { startServer, tempDataDir, type RunningServer } from "../support/ServerProcess.ts"
import { mintToken } from "../support/Tokens.ts"

const running: Array<RunningServer> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop("SIGKILL")))
})

const start = async (env: Record<string, string | undefined>, options?: { waitReady?: boolean }) => {
  const server = await startServer(env, options)
  running.push(server)
  return server
}

const url = (port: number, path: string) => `http://127.0.0.1:${port}${path}`

describe("the bundled server (a real process, the embedded default)", () => {
  it("starts all three listeners with no database server, each answering the uniform group and its OpenAPI", async () => {
    const dataDir = tempDataDir()
    const server = await start({ DATA_DIR: dataDir, LOG_FORMAT: "json" })
    for (const port of Object.values(server.ports)) {
      const health = await fetch(url(port, "/api/v1/health"))
      assert.deepStrictEqual(await health.json(), { data: { status: "ok" } })
      const ready = await fetch(url(port, "/api/v1/ready"))
      assert.strictEqual(ready.status, 200)
      const version = (await (await fetch(url(port, "/api/v1/version"))).json()) as {
        data: { contractVersion: string }
      }
      assert.strictEqual(version.data.contractVersion, "v1")
      for (const variant of ["?format=json", "?format=yaml"]) {
        const text = await (await fetch(url(port, `/api/v1/openapi${variant}`))).text()
        const document = variant.endsWith("yaml") ? parse(text) : JSON.parse(text)
        const result = await new Validator().validate(document)
        assert.isTrue(result.valid, JSON.stringify(result.errors))
      }
      const docs = await fetch(url(port, "/api/v1/docs"))
      assert.match(docs.headers.get("content-type") ?? "", /text\/html/)
    }
    // Development secrets are generated once and kept under DATA_DIR; the log names them and shows none.
    const secrets = JSON.parse(readFileSync(join(dataDir, "dev-secrets.json"), "utf8")) as Record<string, string>
    assert.hasAllKeys(secrets, [
      "HUB_ADMIN_KEY",
      "HUB_SECRETS_KEY",
      "HUB_VAPID_PRIVATE_KEY",
      "DECISIONS_API_KEY",
      "DECISIONS_EMBED_KEY",
      "DECISIONS_SECRETS_KEY",
      "DECISIONS_SIGNING_KEY",
      "TASKS_API_KEY",
      "TASKS_SIGNING_KEY",
      "TASKS_SECRETS_KEY",
      "TASKS_OIDC_CLIENT_SECRET"
    ])
    assert.include(server.output(), "DECISIONS_API_KEY")
    for (const value of Object.values(secrets)) assert.notInclude(server.output(), value)
    const manifest = await fetch(url(server.ports.decisions, "/api/v1/manifest"), {
      headers: { "x-decisions-api-key": secrets["DECISIONS_API_KEY"]! }
    })
    assert.strictEqual(((await manifest.json()) as { data: { service: string } }).data.service, "decisions")
    const wrongKey = await fetch(url(server.ports.decisions, "/api/v1/manifest"), {
      headers: { "x-decisions-api-key": "x" }
    })
    assert.strictEqual(wrongKey.status, 401)
  })

  it("keeps its data across a restart on the embedded database, and drains a long-poll on SIGTERM", async () => {
    const dataDir = tempDataDir()
    const env = { DATA_DIR: dataDir, SHUTDOWN_DRAIN_MS: "8000" }
    const first = await start(env)
    const secrets = JSON.parse(readFileSync(join(dataDir, "dev-secrets.json"), "utf8")) as Record<string, string>
    const workspace = async (
      port: number,
      method: string,
      path: string,
      email: string,
      role: string,
      body?: unknown
    ) => {
      const token = await mintToken({
        key: secrets["DECISIONS_EMBED_KEY"]!,
        issuer: "platform-hub",
        audience: "decisions",
        email,
        companyId: "acme",
        orgRole: role
      })
      const response = await fetch(url(port, path), {
        method,
        headers: {
          "content-type": "application/json",
          "x-decisions-api-key": secrets["DECISIONS_API_KEY"]!,
          "x-workspace-token": token
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      return (await response.json()) as any
    }
    await workspace(first.ports.decisions, "POST", "/api/v1/workspace/roles", "admin@acme.test", "OWNER", {
      slug: "ops",
      name: "Ops"
    })
    const key = (
      await workspace(first.ports.decisions, "POST", "/api/v1/workspace/keys", "admin@acme.test", "OWNER", {
        name: "agent"
      })
    ).data.plaintext as string
    const created = await fetch(url(first.ports.decisions, "/api/v1/decisions"), {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}`, "idempotency-key": "one" },
      body: JSON.stringify({ title: "Ship it?", roleSlug: "ops", options: [{ label: "Yes" }, { label: "No" }] })
    })
    assert.strictEqual(created.status, 201)
    const id = ((await created.json()) as any).data.decision.id as string

    // A long-poll in flight when SIGTERM arrives is answered before the process exits.
    const poll = fetch(url(first.ports.decisions, `/api/v1/decisions/${id}?wait=2`), {
      headers: { authorization: `Bearer ${key}` }
    })
    await new Promise((r) => setTimeout(r, 300))
    first.child.kill("SIGTERM")
    const polled = await poll
    assert.strictEqual(polled.status, 200)
    assert.strictEqual(((await polled.json()) as any).data.decision.status, "pending")
    assert.strictEqual(await first.exited, 0)

    const second = await start(env)
    const again = await fetch(url(second.ports.decisions, `/api/v1/decisions/${id}`), {
      headers: { authorization: `Bearer ${key}` }
    })
    assert.strictEqual(again.status, 200)
    assert.strictEqual(((await again.json()) as any).data.decision.title, "Ship it?")
    // Two starts of the whole server and a drain: on two busy cores that can take longer than one start's 30 s.
  }, 90_000)

  it("refuses to start on a bad variable, naming it", async () => {
    const server = await start({ DATA_DIR: tempDataDir(), HUB_PORT: "not-a-port" }, { waitReady: false })
    assert.strictEqual(await server.exited, 1)
    assert.include(server.output(), "HUB_PORT")
    assert.notInclude(server.output(), "    at ")
  })

  it("in production generates no secret: the manifest fails closed with 503 and the envelope", async () => {
    const server = await start({ DATA_DIR: tempDataDir(), NODE_ENV: "production" })
    const manifest = await fetch(url(server.ports.decisions, "/api/v1/manifest"), {
      headers: { "x-decisions-api-key": "anything" }
    })
    assert.strictEqual(manifest.status, 503)
    assert.strictEqual(((await manifest.json()) as any).error.code, "UNAVAILABLE")
    assert.include(server.output(), "DECISIONS_API_KEY is not set")
    // In production every answer writes its line at info level, as the log collectors expect.
    await fetch(url(server.ports.hub, "/api/v1/health"))
    for (let i = 0; i < 50 && !server.output().includes("Sent HTTP response"); i++) {
      await new Promise((r) => setTimeout(r, 100))
    }
    assert.match(server.output(), /"message":"Sent HTTP response".*"service":"hub"/)
    assert.match(server.output(), /"message":"ready: hub http:\/\/127\.0\.0\.1:\d+\/, decisions /)
  })
})
