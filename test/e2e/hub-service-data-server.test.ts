import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, assert, describe, it } from "vitest"
import { sign } from "../../core/auth/Signature.ts"
import { startServer, tempDataDir, type RunningServer } from "../support/ServerProcess.ts"

const running: Array<RunningServer> = []
const rosters: Array<Server> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop("SIGKILL")))
  await Promise.all(rosters.splice(0).map((r) => new Promise((resolve) => r.close(resolve))))
})

const adminKey = "hub-admin-key-for-the-service-data-test"
const crmKey = "crm-context-key-0123456789"
const recapsKey = "recaps-context-key-0123456789"
const rosterKey = "expert-roster-internal-key-0123"

/** The expert roster's stand-in: one client matched to eng@experts.test, answered to its internal key only. */
const startRoster = async () => {
  const server = createServer((req, res) => {
    const ok = req.headers["internalauthorization"] === rosterKey
    res.writeHead(ok ? 200 : 401, { "content-type": "application/json" })
    res.end(
      JSON.stringify(
        ok ? { data: { clients: [{ email: "client@example.test", activeEngineers: ["eng@experts.test"] }] } } : {}
      )
    )
  })
  rosters.push(server)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/roster`
}

const env = (dataDir: string, rosterUrl: string) => ({
  DATA_DIR: dataDir,
  LOG_FORMAT: "json",
  HUB_ADMIN_KEY: adminKey,
  HUB_CONTEXT_KEYS: `crm:${crmKey},meeting-recaps:${recapsKey}`,
  HUB_EXPERT_ROSTER_URL: rosterUrl,
  HUB_EXPERT_ROSTER_KEY: rosterKey
})

/** A signed call: a GET signs its raw query string, a POST its raw body. */
const signed = async (port: number, caller: string, key: string, path: string, payload: string, method = "GET") => {
  const timestamp = Math.floor(Date.now() / 1000)
  const response = await fetch(`http://127.0.0.1:${port}${path}${method === "GET" ? `?${payload}` : ""}`, {
    method,
    headers: {
      "x-workspace-service-id": caller,
      "x-platform-timestamp": String(timestamp),
      "x-platform-signature": sign({ secret: key, timestamp, payload }),
      ...(method === "GET" ? {} : { "content-type": "application/json" })
    },
    ...(method === "GET" ? {} : { body: payload })
  })
  return { status: response.status, json: (await response.json()) as any }
}

describe("the service-data plane in the bundled server (a real process, the embedded default)", () => {
  it("answers the roster, matched clients and short links whose redirect survives a restart", async () => {
    const dataDir = tempDataDir()
    const rosterUrl = await startRoster()
    let server = await startServer(env(dataDir, rosterUrl))
    running.push(server)

    const org = await fetch(`http://127.0.0.1:${server.ports.hub}/api/v1/admin/orgs`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Acme" })
    })
    const orgId = ((await org.json()) as any).data.org.id as string
    const roster = await signed(server.ports.hub, "crm", crmKey, "/api/v1/service-data/org-roster", `orgId=${orgId}`)
    assert.strictEqual(roster.status, 200)
    assert.deepInclude(roster.json.data.org, { id: orgId, status: "active", name: "Acme" })

    const matched = await signed(
      server.ports.hub,
      "meeting-recaps",
      recapsKey,
      "/api/v1/service-data/matched-clients",
      "email=eng%40experts.test"
    )
    assert.deepStrictEqual(matched, { status: 200, json: { data: { clients: ["client@example.test"] } } })

    const body = JSON.stringify({ kind: "recording", slug: "Rec_0123456789-abcdef" })
    const link = await signed(
      server.ports.hub,
      "meeting-recaps",
      recapsKey,
      "/api/v1/service-data/short-link",
      body,
      "POST"
    )
    assert.strictEqual(link.status, 200)
    assert.isTrue(link.json.data.shortened)
    const path = new URL(link.json.data.url as string).pathname
    assert.match(path, /^\/s\/[A-Za-z0-9_-]{11}$/)

    // The code is kept in the hub's database: after a restart it still redirects.
    await server.stop("SIGTERM")
    running.splice(0)
    server = await startServer(env(dataDir, rosterUrl))
    running.push(server)
    const followed = await fetch(`http://127.0.0.1:${server.ports.hub}${path}`, { redirect: "manual" })
    assert.strictEqual(followed.status, 302)
    assert.match(followed.headers.get("location") ?? "", /\/recordings\/Rec_0123456789-abcdef$/)
  }, 120_000)
})
