import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import { randomBytes } from "node:crypto"
import { afterEach, assert, describe, it } from "vitest"
import { sign } from "../../core/auth/Signature.ts"
import { newPushKeys, startPeer } from "../support/NotificationPeers.ts"
import { startServer, tempDataDir, type RunningServer } from "../support/ServerProcess.ts"
import { startSmtpServer, type SmtpTestServer } from "../support/SmtpServer.ts"
import { isSignInMail, signInByEmailedLink } from "../support/EmailSignIn.ts"
import { until as waitUntil } from "../support/Until.ts"

/**
 * The hub's channels against real peers, on a real server process: an SMTP server receives the emails (one
 * digest per person per interval), a local webhook receives the chat messages, a local push service
 * receives the encrypted pushes (decrypted here with the browser's keys). A person signs in by email link
 * and reads their own feed with the session. A server killed between filing and sending sends the email
 * exactly once after its restart.
 */

const running: Array<RunningServer> = []
const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop("SIGKILL")))
  await Promise.all(cleanups.splice(0).map((f) => f()))
})

const adminKey = "hub-admin-key-for-the-channels-test"
const publicUrl = "https://workspace.example.test"
/** Long enough that the test files every notification of a digest inside one interval, even on a busy machine. */
const digestMillis = 8_000

/** Waits as the shared `until` does, a minute by default: these servers send on second-long schedules. */
const until = <A>(what: string, attempt: () => Promise<A | undefined>, ms = 60_000) => waitUntil(what, attempt, ms)

const freshPostgres = async (serverUrl: string) => {
  const name = `hitl_channels_${randomBytes(5).toString("hex")}`
  const admin = (statement: (sql: PgClient.PgClient) => Effect.Effect<unknown, unknown>) =>
    Effect.runPromise(
      Effect.scoped(
        Effect.flatMap(PgClient.make({ url: Redacted.make(serverUrl), maxConnections: 1 }), statement)
      ).pipe(Effect.provide(Reactivity.layer)) as Effect.Effect<unknown>
    )
  await admin((sql) => sql`CREATE DATABASE ${sql(name)}`)
  cleanups.push(() => admin((sql) => sql`DROP DATABASE IF EXISTS ${sql(name)} WITH (FORCE)`).then(() => undefined))
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return url.toString()
}

const databases = [
  { name: "embedded database", url: undefined as string | undefined },
  ...(process.env["DATABASE_URL"] ? [{ name: "Postgres server", url: process.env["DATABASE_URL"] }] : [])
]

interface Answer {
  readonly status: number
  readonly json: any
  readonly headers: Headers
}

/** The hub of one running server, spoken to as an operator, a producer and signed-in people. */
const hubOf = (server: () => RunningServer, smtp: SmtpTestServer) => {
  const call = async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {}
  ): Promise<Answer> => {
    const response = await fetch(`http://127.0.0.1:${server().ports.hub}${path}`, {
      method,
      redirect: "manual",
      headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await response.text()
    let json: unknown
    try {
      json = text.length > 0 ? JSON.parse(text) : undefined
    } catch {
      json = undefined
    }
    return { status: response.status, json, headers: response.headers }
  }
  const admin = (method: string, path: string, body?: unknown) =>
    call(method, path, body, { authorization: `Bearer ${adminKey}` })

  /** Signs the person in by the emailed link; answers a caller that carries their session cookie. */
  const signIn = async (email: string) => {
    const hubUrl = `http://127.0.0.1:${server().ports.hub}`
    // The link names the public address; the test reaches the same hub on its loopback port.
    const session = await signInByEmailedLink({ hubUrl, smtp, email, publicUrl })
    // The workspace's own pages send the hub's public origin.
    return (method: string, path: string, body?: unknown, origin = publicUrl) =>
      call(method, path, body, { cookie: `hub_session=${session}`, ...(method === "GET" ? {} : { origin }) })
  }

  let signingKey = ""
  const registerProducer = async () => {
    const registered = await admin("POST", "/api/v1/admin/services", {
      id: "acmebot",
      displayName: "Acme bot",
      baseUrl: "https://acmebot.example"
    })
    assert.strictEqual(registered.status, 201)
    signingKey = registered.json.data.credentials.signingKey
    const catalog = await admin("POST", "/api/v1/admin/event-catalog", {
      type: "acmebot.notification.created",
      producer: "acmebot",
      isNotification: true,
      dataSchema: {
        type: "object",
        required: ["title"],
        properties: { title: { type: "string" }, body: { type: "string" }, url: { type: "string" } }
      }
    })
    assert.strictEqual(catalog.status, 201)
  }

  let sequence = 0
  /** The producer notifies `email`; answers the event id once the hub accepted it. */
  const notify = async (
    email: string,
    data: Record<string, string>,
    about: { readonly companyId?: string; readonly occurredAt?: string; readonly id?: string } = {}
  ) => {
    const id = about.id ?? `01JD2Z3Q4R5S6T7V8W9X${String(++sequence).padStart(6, "0")}`
    const body = JSON.stringify({
      id,
      type: "acmebot.notification.created",
      service: "acmebot",
      occurredAt: about.occurredAt ?? new Date().toISOString(),
      subject: { email, ...(about.companyId === undefined ? {} : { companyId: about.companyId }) },
      data,
      contractVersion: "v1"
    })
    const timestamp = Math.floor(Date.now() / 1000)
    const response = await fetch(`http://127.0.0.1:${server().ports.hub}/api/webhooks/events`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-platform-signature": sign({ secret: signingKey, timestamp, payload: body }),
        "x-platform-timestamp": String(timestamp),
        "x-platform-event-id": id,
        "x-platform-delivery": `d_${id}`
      },
      body
    })
    // The same event sent again (an id given) is a duplicate the hub acknowledges without filing it again.
    assert.oneOf(response.status, about.id === undefined ? [202] : [200, 202], await response.text())
    return id
  }

  /** The operator's view of the person: the feed and the delivery log. */
  const log = async (email: string) =>
    (await admin("GET", `/api/v1/admin/users/${encodeURIComponent(email)}/notifications?limit=200`)).json.data as {
      notifications: Array<{ id: string; eventId: string; title: string; readAt: string | null }>
      deliveries: Array<{ notificationId: string; channel: string; target: string; status: string; attempts: number }>
    }

  /** Waits until every delivery of the person has settled (none pending or sending), and answers the log. */
  const settled = (email: string, expected: number) =>
    until(`${expected} settled deliveries for ${email}`, async () => {
      const data = await log(email)
      const done = data.deliveries.filter((d) => !["pending", "sending"].includes(d.status))
      return data.deliveries.length === expected && done.length === expected ? data : undefined
    })

  return { call, admin, signIn, registerProducer, notify, log, settled }
}

describe.each(databases)("the hub's notification channels deliver ($name)", ({ url: serverUrl }) => {
  it("sends one digest per person, chat and encrypted pushes; the person reads only their own feed; 410 forgets the browser", async () => {
    const smtp = await startSmtpServer()
    const chat = await startPeer(200)
    const pushService = await startPeer(201)
    cleanups.push(smtp.close, chat.close, pushService.close)
    const dataDir = tempDataDir()
    const env = {
      DATA_DIR: dataDir,
      ...(serverUrl === undefined ? {} : { DATABASE_URL: await freshPostgres(serverUrl) }),
      HUB_ADMIN_KEY: adminKey,
      HUB_PUBLIC_URL: publicUrl,
      HUB_WORKER_POLL_MS: "100",
      HUB_EMAIL_BATCH_MS: String(digestMillis),
      HUB_DELIVERY_RETRY_SCHEDULE: "0.2,0.2",
      SMTP_URL: smtp.url,
      SMTP_FROM: "Workspace <hub@example.test>"
    }
    const server = await startServer(env)
    running.push(server)
    const hub = hubOf(() => server, smtp)
    await hub.registerProducer()
    for (const [email, name] of [
      ["ada@acme.test", "Ada"],
      ["bob@acme.test", "Bob"]
    ]) {
      assert.strictEqual((await hub.admin("POST", "/api/v1/admin/users", { email, name })).status, 201)
    }
    const ada = await hub.signIn("ada@acme.test")
    const bob = await hub.signIn("bob@acme.test")

    // Preferences: defaults, then Ada opts into every channel; refusals name the field.
    assert.deepStrictEqual((await ada("GET", "/api/v1/me/preferences")).json.data, {
      channels: ["bell", "email"],
      emailMode: "digest",
      chatWebhook: false,
      serviceVisible: {}
    })
    for (const [body, field] of [
      [{ channels: ["fax"] }, "channels.0"],
      [{ emailMode: "hourly" }, "emailMode"],
      [{ chatWebhookUrl: "https://10.1.2.3/hook" }, "chatWebhookUrl"],
      [{ chatWebhookUrl: "not a url" }, "chatWebhookUrl"]
    ] as const) {
      const refused = await ada("PATCH", "/api/v1/me/preferences", body)
      assert.strictEqual(refused.status, 400, JSON.stringify(body))
      assert.strictEqual(refused.json.error.code, "VALIDATION_ERROR")
      assert.include(
        refused.json.error.details.map((d: { field: string }) => d.field),
        field
      )
    }
    const chosen = await ada("PATCH", "/api/v1/me/preferences", {
      channels: ["bell", "email", "chat", "push"],
      chatWebhookUrl: chat.url("/hooks/ada")
    })
    assert.strictEqual(chosen.status, 200)
    assert.deepStrictEqual(chosen.json.data, {
      channels: ["bell", "email", "chat", "push"],
      emailMode: "digest",
      chatWebhook: true,
      serviceVisible: {}
    })
    // Without the session there is no one to act for.
    assert.strictEqual((await hub.call("GET", "/api/v1/me/preferences")).status, 401)

    // Ada's browser subscribes with the hub's VAPID key.
    const pushKey = await ada("GET", "/api/v1/me/push-key")
    assert.strictEqual(pushKey.status, 200)
    assert.strictEqual(Buffer.from(pushKey.json.data.publicKey, "base64url").length, 65)
    const browser = newPushKeys()
    const endpoint = pushService.url("/push/ada-laptop")
    const subscribed = await ada("POST", "/api/v1/me/push-subscriptions", { endpoint, keys: browser.json })
    assert.strictEqual(subscribed.status, 201)
    const badKeys = await ada("POST", "/api/v1/me/push-subscriptions", {
      endpoint,
      keys: { p256dh: "short", auth: browser.json.auth }
    })
    assert.strictEqual(badKeys.status, 400)

    // Three notifications for Ada and two for Bob, all inside one digest interval.
    const adaTitles = ["Report <ready>", "Second & last", "Third"]
    for (const title of adaTitles) await hub.notify("ada@acme.test", { title, url: "/apps/acmebot/home" })
    for (const title of ["For Bob 1", "For Bob 2"]) await hub.notify("bob@acme.test", { title })

    // Ada: 3 emails' worth in one digest, 3 chat messages, 3 pushes. Bob: one digest of 2.
    const adaLog = await hub.settled("ada@acme.test", 9)
    const bobLog = await hub.settled("bob@acme.test", 2)
    for (const d of [...adaLog.deliveries, ...bobLog.deliveries]) {
      assert.deepStrictEqual([d.status, d.attempts], ["sent", 1], JSON.stringify(d))
    }
    const adaMail = smtp.to("ada@acme.test").filter((m) => !isSignInMail(m))
    const bobMail = smtp.to("bob@acme.test").filter((m) => !isSignInMail(m))
    assert.lengthOf(adaMail, 1)
    assert.lengthOf(bobMail, 1)
    assert.strictEqual(adaMail[0]!.subject, "3 new notifications")
    assert.strictEqual(adaMail[0]!.from, "hub@example.test")
    for (const title of adaTitles) assert.include(adaMail[0]!.text, title)
    assert.include(adaMail[0]!.text, `${publicUrl}/apps/acmebot/home`)
    // The HTML part escapes what the producer wrote.
    assert.include(adaMail[0]!.html, "Report &lt;ready&gt;")
    assert.include(adaMail[0]!.html, "Second &amp; last")
    assert.notInclude(adaMail[0]!.html, "<ready>")
    assert.include(adaMail[0]!.html, `href="${publicUrl}/apps/acmebot/home"`)
    assert.include(bobMail[0]!.text, "For Bob 1")
    assert.include(bobMail[0]!.text, "For Bob 2")
    assert.notInclude(bobMail[0]!.text, "Third")

    const chats = chat.to("/hooks/ada").map((r) => JSON.parse(r.body.toString("utf8")) as { text: string })
    assert.sameMembers(
      chats.map((c) => c.text),
      [
        `*Report &lt;ready&gt;*\n<${publicUrl}/apps/acmebot/home|Open>`,
        `*Second &amp; last*\n<${publicUrl}/apps/acmebot/home|Open>`,
        `*Third*\n<${publicUrl}/apps/acmebot/home|Open>`
      ]
    )
    const pushes = pushService.to("/push/ada-laptop")
    assert.lengthOf(pushes, 3)
    const decrypted = pushes.map((p) => JSON.parse(browser.decrypt(p.body)) as { title: string; url: string })
    assert.sameMembers(
      decrypted.map((p) => p.title),
      adaTitles
    )
    assert.isTrue(decrypted.every((p) => p.url === `${publicUrl}/apps/acmebot/home`))
    assert.match(
      String(pushes[0]!.headers["authorization"]),
      new RegExp(`^vapid t=.+, k=${pushKey.json.data.publicKey}$`)
    )

    // The bell: Ada's own feed, newest first, in pages.
    const first = await ada("GET", "/api/v1/me/notifications?limit=2")
    assert.strictEqual(first.status, 200)
    assert.deepStrictEqual(
      first.json.data.items.map((n: { title: string }) => n.title),
      ["Third", "Second & last"]
    )
    assert.strictEqual(first.json.data.unreadCount, 3)
    assert.deepStrictEqual(Object.keys(first.json.data.items[0]).sort(), [
      "body",
      "createdAt",
      "id",
      "readAt",
      "service",
      "title",
      "type",
      "url"
    ])
    const second = await ada("GET", `/api/v1/me/notifications?limit=2&cursor=${first.json.data.nextCursor}`)
    assert.deepStrictEqual(
      second.json.data.items.map((n: { title: string }) => n.title),
      ["Report <ready>"]
    )
    assert.isNull(second.json.data.nextCursor)
    const bogus = await ada("GET", "/api/v1/me/notifications?cursor=bogus")
    assert.strictEqual(bogus.status, 400)
    assert.deepStrictEqual(bogus.json.error.details, [
      { in: "query", field: "cursor", message: "is not a cursor this list returned" }
    ])
    assert.strictEqual((await ada("GET", "/api/v1/me/notifications?limit=500")).status, 400)
    const oldest = second.json.data.items[0].id as string
    // Bob cannot see or mark Ada's notifications: the same 404 as a missing one.
    const bobsFeed = await bob("GET", "/api/v1/me/notifications")
    assert.deepStrictEqual(
      bobsFeed.json.data.items.map((n: { title: string }) => n.title),
      ["For Bob 2", "For Bob 1"]
    )
    const foreign = await bob("POST", `/api/v1/me/notifications/${oldest}/read`)
    const missing = await bob("POST", `/api/v1/me/notifications/01JD2Z3Q4R5S6T7V8W9X0Y1Z2A/read`)
    assert.strictEqual(foreign.status, 404)
    assert.deepStrictEqual(foreign.json, missing.json)
    const read = await ada("POST", `/api/v1/me/notifications/${oldest}/read`)
    assert.strictEqual(read.status, 200)
    assert.strictEqual(read.json.data.id, oldest)
    assert.isString(read.json.data.readAt)
    assert.strictEqual((await ada("GET", "/api/v1/me/notifications")).json.data.unreadCount, 2)
    assert.deepStrictEqual((await ada("POST", "/api/v1/me/notifications/read-all")).json.data, { read: 2 })
    assert.strictEqual((await ada("GET", "/api/v1/me/notifications")).json.data.unreadCount, 0)
    // A change from another site's page is refused.
    const crossSite = await bob("POST", "/api/v1/me/notifications/read-all", undefined, "https://evil.example")
    assert.strictEqual(crossSite.status, 403)
    assert.strictEqual((await bob("GET", "/api/v1/me/notifications")).json.data.unreadCount, 2)

    // A hidden service is neither shown nor sent.
    await ada("PATCH", "/api/v1/me/preferences", { serviceVisible: { acmebot: false } })
    assert.deepStrictEqual((await ada("GET", "/api/v1/me/notifications")).json.data.items, [])
    await hub.notify("ada@acme.test", { title: "Hidden" })
    const hidden = await until("the hidden notification filed", async () => {
      const data = await hub.log("ada@acme.test")
      return data.notifications.some((n) => n.title === "Hidden") ? data : undefined
    })
    assert.lengthOf(hidden.deliveries, 9)
    await ada("PATCH", "/api/v1/me/preferences", { serviceVisible: {}, emailMode: "immediate" })

    // The push service says Ada's browser is gone: the hub forgets it and pushes there no more.
    pushService.answer("/push/ada-laptop", 410)
    await hub.notify("ada@acme.test", { title: "After the browser left" })
    const gone = await hub.settled("ada@acme.test", 12)
    const last = gone.notifications.find((n) => n.title === "After the browser left")!
    const ofLast = gone.deliveries.filter((d) => d.notificationId === last.id)
    assert.sameMembers(
      ofLast.map((d) => `${d.channel}:${d.status}`),
      ["email:sent", "chat:sent", "push:cancelled"]
    )
    await hub.notify("ada@acme.test", { title: "No browser now" })
    const after = await hub.settled("ada@acme.test", 14)
    const latest = after.notifications.find((n) => n.title === "No browser now")!
    assert.sameMembers(
      after.deliveries.filter((d) => d.notificationId === latest.id).map((d) => d.channel),
      ["email", "chat"]
    )
    assert.lengthOf(pushService.to("/push/ada-laptop"), 4)
    // Immediate email: one message per notification, never a second copy of one.
    const immediate = smtp.to("ada@acme.test").filter((m) => !isSignInMail(m))
    assert.deepStrictEqual(
      immediate.map((m) => m.subject),
      ["3 new notifications", "After the browser left", "No browser now"]
    )
    // Unsubscribing an endpoint the person does not have is 404.
    assert.strictEqual((await ada("DELETE", "/api/v1/me/push-subscriptions", { endpoint })).status, 404)
  }, 240_000)

  it("keeps ten browsers per person, and one event makes at most ten push requests to them, retries included", async () => {
    const smtp = await startSmtpServer()
    // Every push is refused for now (503): each one is worth another attempt on the schedule.
    const pushService = await startPeer(503)
    cleanups.push(smtp.close, pushService.close)
    const env = {
      DATA_DIR: tempDataDir(),
      ...(serverUrl === undefined ? {} : { DATABASE_URL: await freshPostgres(serverUrl) }),
      HUB_ADMIN_KEY: adminKey,
      HUB_PUBLIC_URL: publicUrl,
      HUB_WORKER_POLL_MS: "100",
      HUB_DELIVERY_RETRY_SCHEDULE: "0.2,0.2",
      SMTP_URL: smtp.url
    }
    const server = await startServer(env)
    running.push(server)
    const hub = hubOf(() => server, smtp)
    await hub.registerProducer()
    const email = "dee@acme.test"
    assert.strictEqual((await hub.admin("POST", "/api/v1/admin/users", { email, name: "Dee" })).status, 201)
    const dee = await hub.signIn(email)
    assert.strictEqual((await dee("PATCH", "/api/v1/me/preferences", { channels: ["bell", "push"] })).status, 200)
    // Twelve browsers registered, one after another: the last ten are kept.
    for (let n = 1; n <= 12; n++) {
      const endpoint = pushService.url(`/push/dee-${n}`)
      const subscribed = await dee("POST", "/api/v1/me/push-subscriptions", { endpoint, keys: newPushKeys().json })
      assert.strictEqual(subscribed.status, 201)
    }
    const oldest = await dee("DELETE", "/api/v1/me/push-subscriptions", { endpoint: pushService.url("/push/dee-1") })
    assert.strictEqual(oldest.status, 404)

    // Ten browsers, three attempts each on the schedule: thirty requests, were it not for the budget.
    await hub.notify(email, { title: "To every browser" })
    const data = await hub.settled(email, 10)
    assert.sameMembers(
      data.deliveries.map((d) => `${d.channel}:${d.status}`),
      Array<string>(10).fill("push:failed")
    )
    // Settled: nothing else is queued, so this count is final.
    assert.lengthOf(pushService.received, 10)
    assert.sameMembers(
      pushService.received.map((r) => r.path),
      Array.from({ length: 10 }, (_, i) => `/push/dee-${i + 3}`)
    )
  }, 240_000)

  it("a server killed after filing and before sending sends the email exactly once after its restart", async () => {
    const smtp = await startSmtpServer()
    cleanups.push(smtp.close)
    const dataDir = tempDataDir()
    const env = {
      DATA_DIR: dataDir,
      ...(serverUrl === undefined ? {} : { DATABASE_URL: await freshPostgres(serverUrl) }),
      HUB_ADMIN_KEY: adminKey,
      HUB_PUBLIC_URL: publicUrl,
      HUB_WORKER_POLL_MS: "100",
      HUB_EMAIL_BATCH_MS: String(digestMillis),
      SMTP_URL: smtp.url
    }
    let server = await startServer(env)
    running.push(server)
    const hub = hubOf(() => server, smtp)
    await hub.registerProducer()
    assert.strictEqual(
      (await hub.admin("POST", "/api/v1/admin/users", { email: "cy@acme.test", name: "Cy" })).status,
      201
    )
    await hub.notify("cy@acme.test", { title: "Survives a crash" })
    // Filed, its email waiting for the digest: the server dies now.
    await until("the email queued", async () => {
      const data = await hub.log("cy@acme.test")
      return data.deliveries.length === 1 && data.deliveries[0]!.status === "pending" ? data : undefined
    })
    await server.stop("SIGKILL")
    assert.lengthOf(smtp.to("cy@acme.test"), 0)

    server = await startServer(env)
    running.push(server)
    const data = await hub.settled("cy@acme.test", 1)
    assert.deepStrictEqual(
      data.deliveries.map((d) => [d.channel, d.status, d.attempts]),
      [["email", "sent", 1]]
    )
    // Settled: nothing else is queued for it, so this count is final.
    assert.deepStrictEqual(
      smtp.to("cy@acme.test").map((m) => m.subject),
      ["Survives a crash"]
    )
    assert.lengthOf(data.notifications, 1)
  }, 240_000)

  it("posts each happening once to the organization's chat webhook, set by its admins, exactly once across a crash", async () => {
    const smtp = await startSmtpServer()
    const chat = await startPeer(200)
    cleanups.push(smtp.close, chat.close)
    const env = {
      DATA_DIR: tempDataDir(),
      ...(serverUrl === undefined ? {} : { DATABASE_URL: await freshPostgres(serverUrl) }),
      HUB_ADMIN_KEY: adminKey,
      HUB_PUBLIC_URL: publicUrl,
      HUB_WORKER_POLL_MS: "100",
      HUB_DELIVERY_RETRY_SCHEDULE: "2",
      SMTP_URL: smtp.url
    }
    let server = await startServer(env, { readyWithinMillis: 240_000 })
    running.push(server)
    const hub = hubOf(() => server, smtp)
    await hub.registerProducer()
    const org = await hub.admin("POST", "/api/v1/admin/orgs", { name: "Acme", tier: "monthly" })
    assert.strictEqual(org.status, 201)
    const orgId = org.json.data.org.id as string
    for (const [email, role] of [
      ["ada@acme.test", "ADMIN"],
      ["bob@acme.test", "MEMBER"],
      ["cy@other.test", undefined]
    ] as const) {
      assert.strictEqual((await hub.admin("POST", "/api/v1/admin/users", { email, name: email })).status, 201)
      if (role !== undefined) {
        const added = await hub.admin("POST", `/api/v1/admin/orgs/${orgId}/members`, { email, role })
        assert.strictEqual(added.status, 201)
      }
    }
    const ada = await hub.signIn("ada@acme.test")
    const bob = await hub.signIn("bob@acme.test")
    const cy = await hub.signIn("cy@other.test")
    const route = `/api/v1/orgs/${orgId}/chat-webhook`
    const orgHook = chat.url("/org-secret-hook")

    // Only the organization's owners and admins set it; outsiders see no organization at all.
    assert.deepStrictEqual((await ada("GET", route)).json.data, { set: false, host: null })
    assert.strictEqual((await bob("PUT", route, { url: orgHook })).status, 403)
    assert.strictEqual((await bob("GET", route)).status, 403)
    assert.strictEqual((await cy("PUT", route, { url: orgHook })).status, 404)
    assert.strictEqual((await cy("GET", route)).status, 404)
    assert.strictEqual((await ada("PUT", "/api/v1/orgs/no-such-org/chat-webhook", { url: orgHook })).status, 404)
    assert.strictEqual((await ada("PUT", route, { url: orgHook }, "https://elsewhere.example")).status, 403)
    for (const url of ["https://10.1.2.3/hook", "not a url", "ftp://chat.example/hook"]) {
      const refused = await ada("PUT", route, { url })
      assert.strictEqual(refused.status, 400, url)
      assert.strictEqual(refused.json.error.code, "VALIDATION_ERROR")
      assert.deepStrictEqual(
        refused.json.error.details.map((d: { field: string }) => d.field),
        ["url"]
      )
    }
    // Set: the answer says so and names the host; the URL, a credential, never comes back.
    const set = await ada("PUT", route, { url: orgHook })
    assert.strictEqual(set.status, 200, JSON.stringify(set.json))
    const host = new URL(orgHook).host
    assert.deepStrictEqual(set.json.data, { set: true, host })
    assert.deepStrictEqual((await ada("GET", route)).json.data, { set: true, host })
    assert.notInclude(JSON.stringify((await ada("GET", route)).json), "org-secret-hook")

    // Ada's own chat webhook works as before, beside the organization's.
    const mine = await ada("PATCH", "/api/v1/me/preferences", {
      channels: ["bell", "chat"],
      chatWebhookUrl: chat.url("/ada-hook")
    })
    assert.strictEqual(mine.status, 200)

    // One happening, a notification for each of two people: the organization's channel hears it once.
    const happened = new Date().toISOString()
    const waiting = { title: "Invoice 77 needs a decision", body: "Approve or reject.", url: "/apps/acmebot/i-77" }
    const events = [
      await hub.notify("ada@acme.test", waiting, { companyId: orgId, occurredAt: happened }),
      await hub.notify("bob@acme.test", waiting, { companyId: orgId, occurredAt: happened })
    ]
    // About another organization (Cy is not in Acme): never posted to Acme's channel.
    await hub.notify("cy@other.test", { title: "Not Acme's business" }, { companyId: orgId })
    await until("the organization's post and Ada's own", async () =>
      chat.to("/org-secret-hook").length === 1 && chat.to("/ada-hook").length === 1 ? true : undefined
    )
    const posted = JSON.parse(chat.to("/org-secret-hook")[0]!.body.toString("utf8")) as { text: string }
    assert.include(posted.text, "Invoice 77 needs a decision")
    assert.include(posted.text, `${publicUrl}/apps/acmebot/i-77`)
    const orgRows = async () =>
      [...(await hub.log("ada@acme.test")).deliveries, ...(await hub.log("bob@acme.test")).deliveries].filter(
        (d) => d.target === `org:${orgId}`
      )
    const firstRows = await until("the organization's delivery settled", async () => {
      const rows = await orgRows()
      return rows.length === 1 && rows[0]!.status === "sent" ? rows : undefined
    })
    assert.strictEqual(firstRows[0]!.attempts, 1)
    // Cy's notification may be filed on a later pass than the organization's delivery: wait for it.
    const cyChannels = await until("Cy's delivery", async () => {
      const channels = (await hub.log("cy@other.test")).deliveries.map((d) => d.channel)
      return channels.length > 0 ? channels : undefined
    })
    assert.deepStrictEqual(cyChannels, ["email"])

    // A second happening whose first attempt fails: the server dies while the retry waits.
    chat.answer("/org-secret-hook", 503)
    const later = new Date(Date.now() + 1000).toISOString()
    const asked = { title: "Invoice 78 needs a decision" }
    await hub.notify("ada@acme.test", asked, { companyId: orgId, occurredAt: later })
    await until("the failed first attempt", async () => ((await orgRows()).length === 2 ? true : undefined))
    await until("the retry queued", async () =>
      (await orgRows()).some((d) => d.status === "pending" && d.attempts === 1) ? true : undefined
    )
    await server.stop("SIGKILL")
    chat.answer("/org-secret-hook", 200)
    server = await startServer(env, { readyWithinMillis: 240_000 })
    running.push(server)
    // After the restart: Bob's notification of the same happening, and both producers' events sent again.
    await hub.notify("bob@acme.test", asked, { companyId: orgId, occurredAt: later })
    for (const [index, email] of ["ada@acme.test", "bob@acme.test"].entries()) {
      await hub.notify(email, waiting, { companyId: orgId, occurredAt: happened, id: events[index]! })
    }
    const rows = await until("both happenings settled", async () => {
      const all = await orgRows()
      return all.length === 2 && all.every((d) => d.status === "sent") ? all : undefined
    })
    assert.deepStrictEqual(rows.map((d) => d.attempts).sort(), [1, 2])
    // Let any stray worker run (a due row would be sent within a poll), then count what the channel got.
    await new Promise((r) => setTimeout(r, 1000))
    const texts = chat
      .to("/org-secret-hook")
      .map((r) => (JSON.parse(r.body.toString("utf8")) as { text: string }).text.split("\n")[0])
    assert.lengthOf(texts, 3, "one post, one refused attempt, one retry")
    assert.strictEqual(texts.filter((t) => t!.includes("Invoice 77")).length, 1)
    assert.strictEqual(texts.filter((t) => t!.includes("Invoice 78")).length, 2)

    // Removed: nothing more goes there.
    assert.strictEqual((await ada("DELETE", route)).status, 204)
    assert.deepStrictEqual((await ada("GET", route)).json.data, { set: false, host: null })
  }, 600_000)
})
