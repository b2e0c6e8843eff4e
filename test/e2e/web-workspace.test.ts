import { readFileSync } from "node:fs"
import { join } from "node:path"
import type { Browser, Page, Response } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { contentSecurityPolicy } from "../../adapters/http/StaticApp.ts"
import {
  launchBrowser,
  phoneViewport,
  screenshotDirectory,
  seriousViolations,
  watchCsp,
  watchPageErrors
} from "../support/Chromium.ts"
import { startOpenIdProvider, type RunningProvider } from "../support/OpenIdProvider.ts"
import { freePort, startServer, tempDataDir, type RunningServer } from "../support/ServerProcess.ts"
import { startSmtpServer, type SmtpTestServer } from "../support/SmtpServer.ts"
import { mintToken } from "../support/Tokens.ts"

const adminKey = "hub-admin-key-for-the-workspace-test"
const ada = "ada@acme.test"

let server: RunningServer
let smtp: SmtpTestServer
let browser: Browser
let dataDir: string
let upstream: RunningProvider
const upstreamSecret = "the-hub-at-the-organisations-provider"

beforeAll(async () => {
  smtp = await startSmtpServer()
  dataDir = tempDataDir()
  // The organisation's identity provider, a real OpenID provider, knows the hub's callback address.
  const hubPort = await freePort()
  upstream = await startOpenIdProvider([
    { clientId: "hub", clientSecret: upstreamSecret, redirectUri: `http://127.0.0.1:${hubPort}/auth/oidc/callback` }
  ])
  server = await startServer({
    HUB_PORT: String(hubPort),
    HUB_OIDC_ISSUER: upstream.issuer,
    HUB_OIDC_CLIENT_ID: "hub",
    HUB_OIDC_CLIENT_SECRET: upstreamSecret,
    DATA_DIR: dataDir,
    HUB_ADMIN_KEY: adminKey,
    SMTP_URL: smtp.url,
    SMTP_FROM: "Workspace <hub@acme.test>",
    HUB_WORKER_POLL_MS: "100",
    DECISIONS_WORKER_POLL_MS: "100"
  })
  browser = await launchBrowser()
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop("SIGKILL")
  await smtp?.close()
  await upstream?.close()
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
    headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, json: text.length > 0 ? JSON.parse(text) : undefined }
}

/**
 * An organisation with Ada in it and the decisions service installed; in decisions, a role Ada holds and a
 * caller key for an agent. Answers the key.
 */
let agentKey: Promise<string> | undefined
const organisation = () => (agentKey ??= makeOrganisation())
const makeOrganisation = async () => {
  const hub = server.ports.hub
  const admin = (method: string, path: string, body?: unknown) =>
    call(hub, method, path, body, { authorization: `Bearer ${adminKey}` })
  await until("the first-party services to go live", async () => {
    const answer = await admin("GET", "/api/v1/admin/services")
    const live = (answer.json?.data?.services ?? []).filter((s: { status: string }) => s.status === "live")
    return live.length === 2 ? true : undefined
  })
  const org = await admin("POST", "/api/v1/admin/orgs", { name: "Acme", tier: "monthly" })
  assert.strictEqual(org.status, 201, JSON.stringify(org.json))
  const orgId = org.json.data.org.id as string
  assert.strictEqual((await admin("POST", "/api/v1/admin/users", { email: ada, name: "Ada" })).status, 201)
  const member = await admin("POST", `/api/v1/admin/orgs/${orgId}/members`, { email: ada, role: "OWNER" })
  assert.strictEqual(member.status, 201, JSON.stringify(member.json))
  const install = await admin("PUT", `/api/v1/admin/orgs/${orgId}/installations/decisions`, {
    consents: { companyId: true, accessClaims: true, embed: false }
  })
  assert.isBelow(install.status, 300, JSON.stringify(install.json))

  const secrets = JSON.parse(readFileSync(join(dataDir, "dev-secrets.json"), "utf8")) as Record<string, string>
  const asAda = async (method: string, path: string, body?: unknown) =>
    call(server.ports.decisions, method, path, body, {
      "x-decisions-api-key": secrets["DECISIONS_API_KEY"]!,
      "x-workspace-token": await mintToken({
        key: secrets["DECISIONS_EMBED_KEY"]!,
        issuer: "platform-hub",
        audience: "decisions",
        email: ada,
        companyId: orgId,
        orgRole: "OWNER"
      })
    })
  assert.strictEqual((await asAda("POST", "/api/v1/workspace/roles", { slug: "ops", name: "Ops" })).status, 201)
  const assigned = await asAda("POST", "/api/v1/workspace/roles/ops/assignments", { memberEmail: ada })
  assert.isBelow(assigned.status, 300, JSON.stringify(assigned.json))
  const key = await asAda("POST", "/api/v1/workspace/keys", { name: "agent" })
  return key.json.data.plaintext as string
}

/** The page's answer carries the strict CSP; axe-core finds nothing serious; a screenshot when named. */
const checkPage = async (page: Page, answer: Response | null, screenshot?: string) => {
  if (answer !== null) assert.strictEqual(answer.headers()["content-security-policy"], contentSecurityPolicy)
  assert.deepStrictEqual(await seriousViolations(page), [], `accessibility of ${page.url()}`)
  if (screenshot !== undefined)
    await page.screenshot({ path: join(screenshotDirectory(), `${screenshot}.png`), fullPage: true })
}

/** Signs in through the sign-in page and the emailed link, checking each page on the way; lands on home. */
const signIn = async (page: Page, email: string, name: string) => {
  const hub = `http://127.0.0.1:${server.ports.hub}`
  const before = smtp.to(email).length
  let answer = await page.goto(`${hub}/`)
  await page.getByRole("heading", { name: "Sign in to your workspace" }).waitFor()
  await checkPage(page, answer, "workspace-sign-in")

  // The organisation's provider is configured: the page offers it beside the email link.
  await page.getByRole("link", { name: "Sign in with your organisation" }).waitFor()
  await page.getByLabel("Email address").fill(email)
  await page.getByRole("button", { name: "Email me a sign-in link" }).click()
  await page.getByRole("heading", { name: "Check your email" }).waitFor()
  await checkPage(page, null)

  const mail = (await smtp.waitFor(email, before + 1)).at(-1)!
  const link = /https?:\/\/\S+\/auth\/email\/callback\?token=[^\s"<>]+/.exec(mail.text)?.[0]
  assert.isDefined(link, mail.text)
  answer = await page.goto(link!)
  await page.getByRole("heading", { name: `Welcome, ${name}` }).waitFor()
  await checkPage(page, answer)
}

describe("the workspace in Chromium (the bundled server, an SMTP server inside the test)", () => {
  it("signs in by the emailed link, shows who is signed in, and signs out", async () => {
    await organisation()
    const hub = `http://127.0.0.1:${server.ports.hub}`
    const context = await browser.newContext({ viewport: phoneViewport })
    const page = await context.newPage()
    const csp = watchCsp(page)
    const errors = watchPageErrors(page)

    await signIn(page, ada, "Ada")
    await page.getByText(ada).waitFor()
    assert.strictEqual((await context.request.get(`${hub}/api/v1/me`)).status(), 200)

    // Notification settings: a channel off, email as it comes; saved for the next visit.
    await page.getByRole("link", { name: "Settings" }).click()
    await page.getByRole("heading", { name: "Notification settings" }).waitFor()
    await page.getByRole("checkbox", { name: /^In a chat channel/ }).waitFor()
    await checkPage(page, null, "workspace-settings")
    const chat = page.getByRole("checkbox", { name: /^In a chat channel/ })
    if (await chat.isChecked()) await chat.uncheck()
    await page.getByRole("radio", { name: "One email per notification, as it comes" }).check()
    await page.getByRole("button", { name: "Save settings" }).click()
    await page.getByText("Your settings are saved.").waitFor()
    const preferences = (await (await context.request.get(`${hub}/api/v1/me/preferences`)).json()) as {
      data: { channels: Array<string>; emailMode: string }
    }
    assert.strictEqual(preferences.data.emailMode, "immediate")
    assert.notInclude(preferences.data.channels, "chat")
    await page.reload()
    await page.getByRole("radio", { name: "One email per notification, as it comes" }).waitFor()
    assert.isTrue(await page.getByRole("radio", { name: "One email per notification, as it comes" }).isChecked())

    // Signing out comes back to the sign-in page, and the session is over.
    await page.getByRole("button", { name: "Sign out" }).click()
    await page.getByRole("heading", { name: "Sign in to your workspace" }).waitFor()
    assert.strictEqual((await context.request.get(`${hub}/api/v1/me`)).status(), 401)
    // A page's address opened signed out shows the sign-in page, with the app's CSP.
    const answer = await page.goto(`${hub}/apps/decisions/inbox`)
    await page.getByRole("heading", { name: "Sign in to your workspace" }).waitFor()
    await checkPage(page, answer)

    assert.deepStrictEqual(csp, [], "CSP reports in the console")
    assert.deepStrictEqual(errors, [], "errors thrown in the page")
    await context.close()
  }, 120_000)

  it("signs in with the organisation's identity provider, back on the page that was asked for", async () => {
    await organisation()
    const hub = `http://127.0.0.1:${server.ports.hub}`
    const context = await browser.newContext({ viewport: phoneViewport })
    const page = await context.newPage()
    const csp = watchCsp(page)
    const errors = watchPageErrors(page)

    await page.goto(`${hub}/settings`)
    await page.getByRole("heading", { name: "Sign in to your workspace" }).waitFor()
    upstream.signInAs({ sub: "ada-at-acme", email: ada, emailVerified: true, name: "Ada" })
    await page.getByRole("link", { name: "Sign in with your organisation" }).click()
    await page.waitForURL(`${hub}/settings`)
    const answer = await page.reload()
    await page.getByRole("heading", { name: "Notification settings" }).waitFor()
    await checkPage(page, answer)
    assert.strictEqual(upstream.interactions(), 1)

    assert.deepStrictEqual(csp, [], "CSP reports in the console")
    assert.deepStrictEqual(errors, [], "errors thrown in the page")
    await context.close()
  }, 120_000)

  it("opens a waiting decision from the feed, chooses an option, and the agent waiting on it is answered", async () => {
    const key = await organisation()
    const hub = `http://127.0.0.1:${server.ports.hub}`
    const decisions = `http://127.0.0.1:${server.ports.decisions}`
    const title = "Refund order 1042?"
    const created = await call(
      server.ports.decisions,
      "POST",
      "/api/v1/decisions",
      {
        title,
        // What a caller writes is shown as text: markup and script links stay inert.
        body: "The customer asks for a **refund** of 120 EUR. <img src=x onerror=alert(1)> [open](javascript:alert(1))",
        roleSlug: "ops",
        options: [{ label: "Refund" }, { label: "Keep" }]
      },
      { authorization: `Bearer ${key}`, "idempotency-key": "refund-1042" }
    )
    assert.strictEqual(created.status, 201, JSON.stringify(created.json))
    const decision = created.json.data.decision as { id: string; options: Array<{ id: string; label: string }> }

    const context = await browser.newContext({ viewport: phoneViewport })
    const page = await context.newPage()
    const csp = watchCsp(page)
    const errors = watchPageErrors(page)
    await signIn(page, ada, "Ada")

    // The decision's notification reaches the feed, unread.
    const item = page.getByRole("link", { name: title })
    await until("the decision's notification in the feed", async () => {
      await page.reload()
      await page.getByRole("heading", { name: "Welcome, Ada" }).waitFor()
      await page.getByRole("heading", { name: /^Notifications/ }).waitFor()
      return (await item.count()) > 0 ? true : undefined
    })
    assert.strictEqual(await item.getAttribute("href"), `/apps/decisions/decision-${decision.id}`)
    assert.strictEqual(await page.getByRole("button", { name: `Mark as read: ${title}` }).count(), 1)
    await page.getByRole("link", { name: "Decisions" }).first().waitFor()
    await checkPage(page, null, "workspace-home")

    // An agent waits for the answer.
    const waiting = fetch(`${decisions}/api/v1/decisions/${decision.id}?wait=60`, {
      headers: { authorization: `Bearer ${key}` }
    }).then((r) => r.json() as Promise<{ data: { decision: { status: string; resolution?: { optionId?: string } } } }>)

    await item.click()
    await page.waitForURL(`${hub}/apps/decisions/decision-${decision.id}`)
    await page.getByRole("heading", { name: title, level: 1 }).waitFor()
    await page.getByText("<img src=x onerror=alert(1)>", { exact: false }).waitFor()
    assert.strictEqual(await page.locator("main img").count(), 0)
    assert.strictEqual(await page.locator('a[href^="javascript:"]').count(), 0)
    await checkPage(page, null, "workspace-decision")

    // Choosing asks first, then posts the action; the agent's wait is answered with the choice.
    await page.getByRole("button", { name: "Refund", exact: true }).click()
    const question = page.getByRole("alertdialog")
    await question.waitFor()
    await checkPage(page, null)
    await question.getByRole("button", { name: "Refund", exact: true }).click()
    const decided = await waiting
    assert.notStrictEqual(decided.data.decision.status, "pending")
    assert.strictEqual(
      decided.data.decision.resolution?.optionId,
      decision.options.find((option) => option.label === "Refund")!.id
    )
    await page.getByText(/^Chosen: Refund/).waitFor()
    assert.strictEqual(await page.getByRole("button", { name: "Keep", exact: true }).count(), 0)

    // A fresh load of the page's address serves the app with its CSP and shows the decided page.
    const answer = await page.reload()
    await page.getByText(/^Chosen: Refund/).waitFor()
    await checkPage(page, answer)

    // Opening the notification marked it read; once answered, it follows its decision: it says how it ended.
    await page.getByRole("link", { name: "Home" }).click()
    await item.waitFor()
    assert.strictEqual(await page.getByRole("button", { name: `Mark as read: ${title}` }).count(), 0)
    await until("the notification to follow its decision", async () => {
      await page.reload()
      await item.waitFor()
      return (await page.getByText(`Answered by ${ada}: Refund.`).count()) > 0 ? true : undefined
    })
    assert.strictEqual(await page.getByText("agent asks for your decision.").count(), 0)
    await checkPage(page, null)

    // An admin issues a caller key on the keys page: shown once, and it works.
    const keys = await page.goto(`${hub}/apps/decisions/keys`)
    await page.getByLabel("Name (the caller it is for)").fill("browser agent")
    await page.getByRole("button", { name: "Create key" }).click()
    const issued = page.getByLabel("New key (shown only now)")
    await issued.waitFor()
    const plaintext = await issued.inputValue()
    assert.match(plaintext, /^dcd_/)
    await checkPage(page, keys)
    const listed = await fetch(`${decisions}/api/v1/decisions`, { headers: { authorization: `Bearer ${plaintext}` } })
    assert.strictEqual(listed.status, 200)
    await page.reload()
    await page.getByRole("heading", { name: "Caller keys", level: 1 }).waitFor()
    assert.strictEqual(await page.getByLabel("New key (shown only now)").count(), 0)

    assert.deepStrictEqual(csp, [], "CSP reports in the console")
    assert.deepStrictEqual(errors, [], "errors thrown in the page")
    await context.close()
  }, 120_000)
})
