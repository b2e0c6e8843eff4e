import { afterEach, assert, describe, it } from "vitest"
import { sign } from "../../core/auth/Signature.ts"
import { startServer, tempDataDir, type RunningServer } from "../support/ServerProcess.ts"
import { startSmtpServer, type SmtpTestServer } from "../support/SmtpServer.ts"
import { signInLinkIn } from "../support/EmailSignIn.ts"

const running: Array<RunningServer> = []
const smtps: Array<SmtpTestServer> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop("SIGKILL")))
  await Promise.all(smtps.splice(0).map((s) => s.close()))
})

const adminKey = "hub-admin-key-for-the-sign-in-test"
const recapsKey = "recaps-context-key-for-the-sign-in-test"

const until = async <A>(what: string, attempt: () => Promise<A | undefined>, ms = 30_000): Promise<A> => {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await attempt()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

describe("email sign-in in the bundled server (a real process, the embedded default, a real SMTP server)", () => {
  it("signs a member in by email link, names their organizations, and an acknowledged link survives a crash", async () => {
    const smtp = await startSmtpServer()
    smtps.push(smtp)
    const dataDir = tempDataDir()
    const env = {
      DATA_DIR: dataDir,
      LOG_FORMAT: "json",
      HUB_ADMIN_KEY: adminKey,
      HUB_CONTEXT_KEYS: `meeting-recaps:${recapsKey}`,
      HUB_WORKER_POLL_MS: "100",
      SMTP_URL: smtp.url,
      SMTP_FROM: "Workspace <hub@acme.test>"
    }
    let server = await startServer(env)
    running.push(server)
    const hub = () => `http://127.0.0.1:${server.ports.hub}`
    const admin = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${hub()}${path}`, {
        method,
        headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      return { status: response.status, json: (await response.json()) as any }
    }
    const org = await admin("POST", "/api/v1/admin/orgs", { name: "Acme", tier: "monthly" })
    const orgId = org.json.data.org.id as string
    assert.strictEqual(
      (await admin("POST", "/api/v1/admin/users", { email: "ada@acme.test", name: "Ada" })).status,
      201
    )
    assert.strictEqual(
      (await admin("POST", `/api/v1/admin/orgs/${orgId}/members`, { email: "ada@acme.test", role: "ADMIN" })).status,
      201
    )

    const ask = (headers: Record<string, string> = {}) =>
      fetch(`${hub()}/auth/email`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ email: "ada@acme.test" })
      })
    const asked = await ask()
    assert.strictEqual(asked.status, 202)
    // The browser that asked holds the sign-in nonce its links are bound to.
    const asker = { cookie: /hub_sign_in=[^;]+/.exec(asked.headers.get("set-cookie") ?? "")![0] }
    const [mail] = await smtp.waitFor("ada@acme.test", 1, 30_000)
    assert.strictEqual(mail!.from, "hub@acme.test")
    const link = signInLinkIn(mail!.text)!
    assert.isTrue(link.startsWith(`${hub()}/auth/email/callback?token=`))
    const opened = await fetch(link, { redirect: "manual", headers: asker })
    assert.strictEqual(opened.status, 303)
    const cookie = /hub_session=([^;]+)/.exec(opened.headers.get("set-cookie") ?? "")![1]!
    const me = await fetch(`${hub()}/api/v1/me`, { headers: { cookie: `hub_session=${cookie}` } })
    assert.deepStrictEqual(await me.json(), {
      data: {
        user: { email: "ada@acme.test", name: "Ada" },
        organizations: [{ id: orgId, name: "Acme", role: "ADMIN" }]
      }
    })
    // Neither the link's secret nor the session's is written to the log.
    const token = new URL(link).searchParams.get("token")!
    assert.notInclude(server.output(), token)
    assert.notInclude(server.output(), cookie)

    // The viewer link plane, signed by meeting-recaps, through the bundled server.
    const body = JSON.stringify({ email: "guest@client.test", invitedByEmail: "ada@acme.test", landingPath: "/r/1" })
    const timestamp = Math.floor(Date.now() / 1000)
    const viewer = await fetch(`${hub()}/api/v1/service-data/viewer-link`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-workspace-service-id": "meeting-recaps",
        "x-platform-timestamp": String(timestamp),
        "x-platform-signature": sign({ secret: recapsKey, timestamp, payload: body })
      },
      body
    })
    assert.strictEqual(viewer.status, 200)
    const viewerLink = ((await viewer.json()) as any).data.url as string
    const landed = await fetch(viewerLink, { redirect: "manual" })
    assert.strictEqual(landed.status, 303)
    assert.strictEqual(landed.headers.get("location"), "/r/1")

    // The mail server is down when the next link is asked for: the answer is given, then the server dies.
    smtp.behave({ refuse: 451 })
    assert.strictEqual((await ask(asker)).status, 202)
    await until("a refused attempt", async () => (smtp.refused() > 0 ? true : undefined))
    await server.stop("SIGKILL")
    smtp.behave("accept")
    // Same ports: the queued email's link names the hub's address.
    const { hub: HUB, decisions, tasks } = server.ports
    server = await startServer({
      ...env,
      HUB_PORT: String(HUB),
      DECISIONS_PORT: String(decisions),
      TASKS_PORT: String(tasks)
    })
    running.push(server)
    // After the restart the queued email goes out (once the retry is due), and its link works.
    const mails = await smtp.waitFor("ada@acme.test", 2, 60_000)
    const again = await fetch(signInLinkIn(mails[1]!.text)!, { redirect: "manual", headers: asker })
    assert.strictEqual(again.status, 303)
  }, 180_000)

  it("in development without a mail server, the link the worker makes is written to the log", async () => {
    const server = await startServer({ DATA_DIR: tempDataDir(), LOG_FORMAT: "json", HUB_ADMIN_KEY: adminKey })
    running.push(server)
    const hub = `http://127.0.0.1:${server.ports.hub}`
    const created = await fetch(`${hub}/api/v1/admin/users`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
      body: JSON.stringify({ email: "dev@acme.test", name: "Dev" })
    })
    assert.strictEqual(created.status, 201)
    const asked = await fetch(`${hub}/auth/email`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "dev@acme.test" })
    })
    assert.strictEqual(asked.status, 202)
    const link = await until("the link in the log", async () => signInLinkIn(server.output().replaceAll("\\n", " ")))
    const opened = await fetch(link, {
      redirect: "manual",
      headers: { cookie: /hub_sign_in=[^;]+/.exec(asked.headers.get("set-cookie") ?? "")![0] }
    })
    assert.strictEqual(opened.status, 303)
  }, 120_000)
})
