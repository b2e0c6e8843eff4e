import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "vitest"
import { startServer, tempDataDir, type RunningServer } from "../support/ServerProcess.ts"
import { mintToken } from "../support/Tokens.ts"

const running: Array<RunningServer> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop("SIGKILL")))
})

const url = (port: number, path: string) => `http://127.0.0.1:${port}${path}`

/** A role, a caller key and `count` pending decisions on a fresh server, through its HTTP API. */
const seed = async (server: RunningServer, dataDir: string, count: number) => {
  const secrets = JSON.parse(readFileSync(join(dataDir, "dev-secrets.json"), "utf8")) as Record<string, string>
  const token = await mintToken({
    key: secrets["DECISIONS_EMBED_KEY"]!,
    issuer: "platform-hub",
    audience: "decisions",
    email: "admin@acme.test",
    companyId: "acme",
    orgRole: "OWNER"
  })
  const workspace = async (path: string, body: unknown) => {
    const response = await fetch(url(server.ports.decisions, path), {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-decisions-api-key": secrets["DECISIONS_API_KEY"]!,
        "x-workspace-token": token
      },
      body: JSON.stringify(body)
    })
    return (await response.json()) as any
  }
  await workspace("/api/v1/workspace/roles", { slug: "ops", name: "Ops" })
  const key = (await workspace("/api/v1/workspace/keys", { name: "agent" })).data.plaintext as string
  const ids: Array<string> = []
  for (let i = 0; i < count; i++) {
    const created = await fetch(url(server.ports.decisions, "/api/v1/decisions"), {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}`, "idempotency-key": `ship-${i}` },
      body: JSON.stringify({ title: `Ship ${i}?`, roleSlug: "ops", options: [{ label: "Yes" }, { label: "No" }] })
    })
    assert.strictEqual(created.status, 201)
    ids.push(((await created.json()) as any).data.decision.id)
  }
  return { key, ids }
}

describe("shutdown of the bundled server (a real process, the embedded default)", () => {
  // The drain period is far longer than the test may take: only long-polls answered at once can pass.
  it("on SIGTERM, held long-polls are answered at once with their decision (200), then the process exits cleanly", async () => {
    const dataDir = tempDataDir()
    const server = await startServer({ DATA_DIR: dataDir, SHUTDOWN_DRAIN_MS: "120000" })
    running.push(server)
    const { key, ids } = await seed(server, dataDir, 2)

    const polls = [ids[0]!, ids[0]!, ids[1]!].map((id) =>
      fetch(url(server.ports.decisions, `/api/v1/decisions/${id}?wait=60`), {
        headers: { authorization: `Bearer ${key}` }
      })
    )
    // Held: a long-poll on a decision nobody changes answers nothing for a minute.
    const early = await Promise.race([
      Promise.all(polls).then(() => "answered"),
      new Promise((resolve) => setTimeout(() => resolve("held"), 500))
    ])
    assert.strictEqual(early, "held")

    server.child.kill("SIGTERM")
    const answers = await Promise.all(polls)
    for (const [i, answer] of answers.entries()) {
      assert.strictEqual(answer.status, 200)
      const decision = ((await answer.json()) as any).data.decision
      assert.strictEqual(decision.id, i < 2 ? ids[0] : ids[1])
      assert.strictEqual(decision.status, "pending")
      assert.strictEqual(decision.title, i < 2 ? "Ship 0?" : "Ship 1?")
      assert.isArray(decision.actions, "the long-poll's detail, as at the end of a wait")
    }
    assert.strictEqual(await server.exited, 0)
  }, 60_000)
})
