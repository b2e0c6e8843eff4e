import { afterEach, assert, describe, it } from "vitest"
import { sign } from "../../core/auth/Signature.ts"
import { startServer, tempDataDir, type RunningServer } from "../support/ServerProcess.ts"

const running: Array<RunningServer> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop("SIGKILL")))
})

const adminKey = "hub-admin-key-for-the-process-test"
const contextKey = "tasks-context-key-0123456789"
const opsKey = "ops-machine-key-0123456789abcdef"
const adaKey = "ada-machine-key-0123456789abcdef"

const env = (dataDir: string) => ({
  DATA_DIR: dataDir,
  LOG_FORMAT: "json",
  HUB_ADMIN_KEY: adminKey,
  HUB_CONTEXT_KEYS: `tasks:${contextKey}`,
  HUB_WORKER_POLL_MS: "100",
  HUB_EMAIL_BATCH_MS: "200",
  TASKS_MACHINE_KEYS: `${opsKey}:ops@acme.test:Ops Bot,${adaKey}:ada@acme.test:Ada`
})

const until = async <A>(what: string, attempt: () => Promise<A | undefined>, ms = 30_000): Promise<A> => {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await attempt()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

const call = async (
  port: number,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {}
) => {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, json: text.length > 0 ? JSON.parse(text) : undefined }
}

describe("the hub in the bundled server (a real process, the embedded default)", () => {
  it("registers the first-party services live, takes a registered service's signed events once, notifies the user, and keeps it all across a restart", async () => {
    const dataDir = tempDataDir()
    let server = await startServer(env(dataDir))
    running.push(server)
    const admin = (method: string, path: string, body?: unknown) =>
      call(server.ports.hub, method, path, body, { authorization: `Bearer ${adminKey}` })

    // The bundled server registers decisions and tasks, checks their conformance and promotes them.
    const services = await until("the first-party services to go live", async () => {
      const answer = await admin("GET", "/api/v1/admin/services")
      const list = answer.json.data.services as Array<{ id: string; status: string }>
      return list.filter((s) => s.status === "live").length === 2 ? list : undefined
    })
    assert.sameMembers(
      services.map((s) => s.id),
      ["decisions", "tasks"]
    )

    // An organization, a user and a membership, through the operator API.
    const org = await admin("POST", "/api/v1/admin/orgs", { name: "Acme", tier: "monthly" })
    assert.strictEqual(org.status, 201)
    const orgId = org.json.data.org.id as string
    assert.strictEqual(
      (await admin("POST", "/api/v1/admin/users", { email: "Ada@Acme.test", name: "Ada" })).status,
      201
    )
    const member = await admin("POST", `/api/v1/admin/orgs/${orgId}/members`, { email: "ada@acme.test", role: "ADMIN" })
    assert.strictEqual(member.status, 201)

    // A developer's service: registered (credentials shown once), given a notification type by an operator.
    const registered = await admin("POST", "/api/v1/admin/services", {
      id: "acmebot",
      displayName: "Acme bot",
      baseUrl: "https://acmebot.example"
    })
    assert.strictEqual(registered.status, 201)
    const signingKey = registered.json.data.credentials.signingKey as string
    const catalog = await admin("POST", "/api/v1/admin/event-catalog", {
      type: "acmebot.notification.created",
      producer: "acmebot",
      isNotification: true,
      dataSchema: {
        type: "object",
        required: ["title"],
        properties: { title: { type: "string", minLength: 1 } }
      }
    })
    assert.strictEqual(catalog.status, 201)

    const event = {
      id: "01JD2Z3Q4R5S6T7V8W9X0Y1Z2A",
      type: "acmebot.notification.created",
      service: "acmebot",
      occurredAt: "2026-11-22T10:00:00.000Z",
      subject: { email: "ada@acme.test", companyId: orgId },
      data: { title: "Your report is ready" },
      contractVersion: "v1"
    }
    const post = async (port: number, delivery: string) => {
      const body = JSON.stringify(event)
      const timestamp = Math.floor(Date.now() / 1000)
      const response = await fetch(`http://127.0.0.1:${port}/api/webhooks/events`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-platform-signature": sign({ secret: signingKey, timestamp, payload: body }),
          "x-platform-timestamp": String(timestamp),
          "x-platform-event-id": event.id,
          "x-platform-delivery": delivery
        },
        body
      })
      return response.status
    }
    assert.strictEqual(await post(server.ports.hub, "d1"), 202)
    assert.strictEqual(await post(server.ports.hub, "d2"), 200)

    const feedOf = async (email: string) =>
      (await admin("GET", `/api/v1/admin/users/${encodeURIComponent(email)}/notifications`)).json.data
    const feed = await until("the notification in the feed", async () => {
      const data = await feedOf("ada@acme.test")
      return data.notifications.length > 0 && data.deliveries.some((d: any) => d.status === "sent") ? data : undefined
    })
    assert.lengthOf(feed.notifications, 1)
    assert.strictEqual(feed.notifications[0].title, "Your report is ready")
    // The default channels: unread on the bell, and the person's digest once its interval (200 ms) passed.
    assert.isNull(feed.notifications[0].readAt)
    assert.deepStrictEqual(
      feed.deliveries.map((d: any) => [d.channel, d.status, d.attempts]),
      [["email", "sent", 1]]
    )

    // A task delegated in the task inbox reaches the assignee's hub feed through the tasks outbox relay.
    const tasks = (key: string, method: string, path: string, body?: unknown) =>
      call(server.ports.tasks, method, path, body, { "x-api-key": key })
    assert.strictEqual((await tasks(adaKey, "GET", "/api/tasks/mine")).status, 200)
    const created = await tasks(opsKey, "POST", "/api/tasks", { title: "Review the Q4 plan" })
    assert.strictEqual(created.status, 201)
    const delegated = await tasks(opsKey, "POST", `/api/tasks/${created.json.task.id}/delegate`, {
      assignedTo: "ada@acme.test"
    })
    assert.strictEqual(delegated.status, 200)
    await until("the delegation in the hub feed", async () => {
      const data = await feedOf("ada@acme.test")
      return data.notifications.some((n: any) => n.service === "tasks") ? data : undefined
    })

    // Subject context for the task inbox, signed with its context key (AUTH-6).
    const query = `email=${encodeURIComponent("ada@acme.test")}`
    const timestamp = Math.floor(Date.now() / 1000)
    const context = await call(server.ports.hub, "GET", `/api/v1/subject-context?${query}`, undefined, {
      "x-workspace-service-id": "tasks",
      "x-platform-timestamp": String(timestamp),
      "x-platform-signature": sign({ secret: contextKey, timestamp, payload: query })
    })
    assert.strictEqual(context.status, 200)
    assert.deepInclude(context.json.data.subject, { email: "ada@acme.test", companyId: orgId, tier: "monthly" })

    // After a restart the registry, the directory and the accepted event are still there: a redelivery is a duplicate.
    await server.stop("SIGTERM")
    server = await startServer(env(dataDir))
    running.push(server)
    assert.strictEqual(await post(server.ports.hub, "d3"), 200)
    const after = await feedOf("ada@acme.test")
    assert.strictEqual(after.notifications.filter((n: any) => n.service === "acmebot").length, 1)
  }, 120_000)
})
