import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "vitest"
import { freePort, startServer, tempDataDir, type RunningServer, runSeed } from "../support/ServerProcess.ts"
import { until } from "../support/Until.ts"

const running: Array<RunningServer> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop("SIGKILL")))
})

interface FeedItem {
  readonly service: string
  readonly title: string
  readonly url: string | null
  readonly category: string | null
}

describe("the demo reaches real hub feeds (npm run seed, then the bundled server)", () => {
  it("the demo decision reaches the approvers' feeds; a delegation reaches the assignee's", async () => {
    const dataDir = tempDataDir()
    const hubPort = String(await freePort())
    const seeded = await runSeed({ DATA_DIR: dataDir, HUB_PORT: hubPort })
    assert.strictEqual(seeded.code, 0, seeded.output)
    assert.include(seeded.output, "Demo Agency")
    // Where to go next, whom to sign in as, and what the agent key can ask.
    assert.include(
      seeded.output,
      `Next: start the server (npm start; again, if you stopped it to seed), then open http://127.0.0.1:${hubPort}/ and sign in as alice@demo.example.com`
    )
    assert.include(seeded.output, "It asks the roles approvers, delivery (roleSlug)")
    const agentKey = /^ {2}(dcd_\S+)$/m.exec(seeded.output)?.[1]
    assert.isString(agentKey)
    const aliceKey = seeded.output
      .split("\n")
      .find((l) => l.includes("alice@demo.example.com"))
      ?.match(/tsk_[A-Za-z0-9_-]{43}/)?.[0]
    assert.isString(aliceKey)

    const env = { DATA_DIR: dataDir, EVENT_RELAY_POLL_MS: "100", HUB_WORKER_POLL_MS: "100", LOG_LEVEL: "Error" }
    let server = await startServer({ ...env, HUB_PORT: hubPort })
    running.push(server)
    // The agent key asks a role it was said to be able to ask.
    const asked = await fetch(`http://127.0.0.1:${server.ports.decisions}/api/v1/decisions`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${agentKey}`,
        "idempotency-key": "first-1",
        "content-type": "application/json"
      },
      body: JSON.stringify({ title: "Ship it?", roleSlug: "delivery", options: [{ label: "Yes" }, { label: "No" }] })
    })
    assert.strictEqual(asked.status, 201)
    const secrets = JSON.parse(readFileSync(join(dataDir, "dev-secrets.json"), "utf8")) as Record<string, string>
    const hub = (path: string) =>
      fetch(`http://127.0.0.1:${server.ports.hub}${path}`, {
        headers: { authorization: `Bearer ${secrets["HUB_ADMIN_KEY"]}` }
      }).then(async (r) => ({ status: r.status, json: (await r.json()) as any }))
    const feed = async (email: string): Promise<ReadonlyArray<FeedItem>> =>
      (await hub(`/api/v1/admin/users/${encodeURIComponent(email)}/notifications`)).json.data.notifications

    // The open decision the seed raised, for the approvers Alice and Bob; Carol is not one.
    for (const email of ["alice@demo.example.com", "bob@demo.example.com"]) {
      const found = await until(`${email} told of the demo decision`, async () => {
        const items = (await feed(email)).filter((n) => n.service === "decisions")
        return items.length > 0 ? items : undefined
      })
      assert.strictEqual(found[0]!.title, "Move the Acme launch to the first Monday of next month?")
      assert.match(found[0]!.url!, /^\/apps\/decisions\/decision-[0-9A-Z]{26}$/)
      assert.strictEqual(found[0]!.category, "decision_assigned")
    }

    // Alice hands one of her tasks to Bob: Bob hears, in the same hub.
    const tasks = `http://127.0.0.1:${server.ports.tasks}`
    const inbox = (await (await fetch(`${tasks}/api/tasks`, { headers: { "x-api-key": aliceKey! } })).json()) as any
    const task = inbox.tasks[0]
    const delegated = await fetch(`${tasks}/api/tasks/${task.id}/delegate`, {
      method: "POST",
      headers: { "x-api-key": aliceKey!, "content-type": "application/json" },
      body: JSON.stringify({ assignedTo: "bob@demo.example.com", reason: "You know the redirects best." })
    })
    assert.strictEqual(delegated.status, 200)
    const handed = await until("Bob told of the delegation", async () => {
      const items = (await feed("bob@demo.example.com")).filter((n) => n.service === "tasks")
      return items.length > 0 ? items : undefined
    })
    assert.strictEqual(handed[0]!.title, task.title)

    // Seeded again once the server has registered the apps: the organization installs them.
    await server.stop("SIGTERM")
    const again = await runSeed({ DATA_DIR: dataDir })
    assert.strictEqual(again.code, 0, again.output)
    assert.notInclude(again.output, "Not installed")
    server = await startServer(env)
    running.push(server)
    const orgId = again.output.match(/organization (org_[0-9a-z]+)/)?.[1]
    const org = await hub(`/api/v1/admin/orgs/${orgId}`)
    assert.strictEqual(org.status, 200)
    const roster = JSON.stringify(org.json)
    for (const email of ["alice@demo.example.com", "bob@demo.example.com", "carol@demo.example.com"]) {
      assert.include(roster, email)
    }
    assert.includeMembers(
      (org.json.data.installations as Array<{ serviceId: string; active: boolean }>)
        .filter((i) => i.active)
        .map((i) => i.serviceId),
      ["decisions", "tasks"]
    )
  }, 180_000)
})
