import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "vitest"
import { startServer, tempDataDir, type RunningServer } from "../support/ServerProcess.ts"
import { mintToken } from "../support/Tokens.ts"
import { startReceiver } from "../support/WebhookReceiver.ts"

const running: Array<RunningServer> = []
const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop("SIGKILL")))
  await Promise.all(closers.splice(0).map((close) => close()))
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const until = async (done: () => boolean, timeoutMs: number, what: string) => {
  const deadline = Date.now() + timeoutMs
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(25)
  }
}

describe("webhook deliveries survive a crash (a real server process, the embedded database on disk)", () => {
  it("kills the server mid-burst; after a restart every delivery still arrives at least once", async () => {
    const dataDir = tempDataDir()
    const env = {
      DATA_DIR: dataDir,
      DECISIONS_WORKER_POLL_MS: "50",
      WEBHOOK_RETRY_SCHEDULE: "0.2,0.2,0.5,1,1",
      WEBHOOK_TIMEOUT_MS: "1000",
      LOG_LEVEL: "Warn"
    }
    let secret = ""
    // A slow receiver, so the burst is still being sent when the server dies.
    const receiver = await startReceiver(
      () => secret,
      () => ({ status: 200 })
    )
    closers.push(receiver.close)
    let server = await startServer(env)
    running.push(server)
    const base = `http://127.0.0.1:${server.ports.decisions}`
    const secrets = JSON.parse(readFileSync(join(dataDir, "dev-secrets.json"), "utf8")) as Record<string, string>
    const admin = await mintToken({
      key: secrets["DECISIONS_EMBED_KEY"]!,
      issuer: "platform-hub",
      audience: "decisions",
      email: "admin@acme.test",
      companyId: "acme",
      orgRole: "ADMIN"
    })
    const workspace = (path: string, body: unknown) =>
      fetch(`${base}${path}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-decisions-api-key": secrets["DECISIONS_API_KEY"]!,
          "x-workspace-token": admin
        },
        body: JSON.stringify(body)
      }).then((r) => r.json() as Promise<any>)
    await workspace("/api/v1/workspace/roles", { slug: "finance", name: "Finance" })
    const key = (await workspace("/api/v1/workspace/keys", { name: "agent" })).data.plaintext as string
    const caller = (path: string, body?: unknown) =>
      fetch(`${base}${path}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${key}`,
          "idempotency-key": crypto.randomUUID()
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      }).then((r) => r.json() as Promise<any>)
    secret = (await caller("/api/v1/webhooks", { url: receiver.url })).data.secret

    const decisions: Array<string> = []
    const burst = 30
    for (let i = 0; i < burst; i++) {
      const id = (
        await caller("/api/v1/decisions", {
          title: `Burst ${i}`,
          roleSlug: "finance",
          options: [{ label: "Yes" }, { label: "No" }]
        })
      ).data.decision.id as string
      await caller(`/api/v1/decisions/${id}/cancel`)
      decisions.push(id)
    }
    // Kill it hard while deliveries are still going out.
    await until(() => receiver.received.length >= 1, 10_000, "the first delivery")
    server.child.kill("SIGKILL")
    await server.exited
    const beforeRestart = receiver.accepted.size
    assert.isBelow(beforeRestart, burst, "the burst should still be under way when the server is killed")

    server = await startServer(env)
    running.push(server)
    await until(() => receiver.accepted.size >= burst, 30_000, "every delivery after the restart")
    const delivered = [...receiver.accepted.values()].map((e: any) => e.data.decision.id as string).sort()
    assert.deepStrictEqual(delivered, [...decisions].sort())
    assert.isTrue(receiver.received.every((r) => r.verified))
  }, 90_000)
})
