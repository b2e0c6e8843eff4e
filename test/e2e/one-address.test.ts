import { readFileSync } from "node:fs"
import { join } from "node:path"
import type { Browser, BrowserContext } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { launchBrowser } from "../support/Chromium.ts"
import { startServer, tempDataDir, type RunningServer } from "../support/ServerProcess.ts"
import { startSmtpServer, type SmtpTestServer } from "../support/SmtpServer.ts"

/**
 * One address per service in development: a person who types `localhost` where the server's links say
 * `127.0.0.1` is sent to `127.0.0.1` before anything else, so signing in works whichever they typed; the task
 * inbox's failed sign-in is a page. The bundled server, an SMTP server inside the test, Chromium.
 */

let smtp: SmtpTestServer
let server: RunningServer
let browser: Browser
let ports: RunningServer["ports"]

const addPerson = async (dataDir: string, email: string) => {
  const secrets = JSON.parse(readFileSync(join(dataDir, "dev-secrets.json"), "utf8")) as Record<string, string>
  const created = await fetch(`http://127.0.0.1:${ports.hub}/api/v1/admin/users`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${secrets["HUB_ADMIN_KEY"]}` },
    body: JSON.stringify({ email, name: email.split("@")[0] })
  })
  assert.strictEqual(created.status, 201)
}

beforeAll(async () => {
  const dataDir = tempDataDir()
  smtp = await startSmtpServer()
  server = await startServer({ DATA_DIR: dataDir, SMTP_URL: smtp.url, SMTP_FROM: "Hub <hub@example.com>" })
  ports = server.ports
  await addPerson(dataDir, "ada@example.com")
  await addPerson(dataDir, "bea@example.com")
  browser = await launchBrowser()
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop("SIGKILL")
  await smtp?.close()
})

/** Signs `email` in on the hub's sign-in page the context is on, by the link emailed to them. */
const signInByEmail = async (context: BrowserContext, email: string) => {
  const page = context.pages()[0]!
  await page.getByLabel("Email address").fill(email)
  const before = smtp.to(email).length
  await page.getByRole("button", { name: "Email me a sign-in link" }).click()
  await page.getByRole("heading", { name: "Check your email" }).waitFor()
  const mail = (await smtp.waitFor(email, before + 1)).at(-1)!
  const link = /https?:\/\/\S+\/auth\/email\/callback\?token=[^\s"<>]+/.exec(mail.text)?.[0]
  assert.isDefined(link, mail.text)
  await page.goto(link!)
}

const signedInAtHub = (context: BrowserContext) =>
  context.pages()[0]!.evaluate(async () => (await fetch("/api/v1/me")).status)

describe("one address per service in development (Chromium)", () => {
  it("sends a person who typed localhost to 127.0.0.1 before sign-in: the hub and the task inbox sign in, and stay signed in", async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    try {
      await page.goto(`http://localhost:${ports.hub}/`)
      assert.strictEqual(new URL(page.url()).origin, `http://127.0.0.1:${ports.hub}`)
      await signInByEmail(context, "ada@example.com")
      assert.strictEqual(await signedInAtHub(context), 200)

      // The task inbox, typed as localhost: sent to its address, then through the hub's sign-in and back.
      await page.goto(`http://localhost:${ports.tasks}/board`)
      assert.strictEqual(new URL(page.url()).origin, `http://127.0.0.1:${ports.tasks}`)
      const callback = page.waitForResponse((response) => response.url().includes("/auth/callback"))
      await page.getByRole("link", { name: "Sign in" }).click()
      assert.strictEqual((await callback).status(), 303)
      await page.getByRole("button", { name: "Sign out" }).waitFor()
      await page.getByRole("heading", { level: 1, name: "Board" }).waitFor()
      assert.strictEqual(page.url(), `http://127.0.0.1:${ports.tasks}/board`)

      // The hub typed as localhost again: the same signed-in tab, not a signed-out one.
      await page.goto(`http://localhost:${ports.hub}/`)
      assert.strictEqual(new URL(page.url()).origin, `http://127.0.0.1:${ports.hub}`)
      assert.strictEqual(await signedInAtHub(context), 200)
    } finally {
      await context.close()
    }
  }, 120_000)

  it("signs in as ever from 127.0.0.1, and never redirects an API call", async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    try {
      await page.goto(`http://127.0.0.1:${ports.tasks}/board`)
      await page.getByRole("link", { name: "Sign in" }).click()
      assert.strictEqual(new URL(page.url()).origin, `http://127.0.0.1:${ports.hub}`)
      await signInByEmail(context, "bea@example.com")
      await page.getByRole("heading", { level: 1, name: "Board" }).waitFor()
      assert.strictEqual(page.url(), `http://127.0.0.1:${ports.tasks}/board`)

      for (const port of Object.values(ports)) {
        const health = await fetch(`http://localhost:${port}/api/v1/health`, {
          redirect: "manual",
          headers: { accept: "text/html,*/*" }
        })
        assert.strictEqual(health.status, 200)
      }
    } finally {
      await context.close()
    }
  }, 120_000)

  it("answers a task inbox sign-in that cannot finish with a page that says how to start again", async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    try {
      const answer = await page.goto(`http://127.0.0.1:${ports.tasks}/auth/callback?code=stale&state=stale`)
      assert.strictEqual(answer!.status(), 401)
      assert.match(answer!.headers()["content-type"] ?? "", /^text\/html/)
      await page.getByRole("heading", { level: 1, name: "Sign-in failed" }).waitFor()
      assert.notInclude(await page.content(), '{"error"')
      await page.getByRole("link", { name: "Sign in again" }).click()
      // Back through the hub's sign-in page.
      await page.getByLabel("Email address").waitFor()
      assert.strictEqual(new URL(page.url()).origin, `http://127.0.0.1:${ports.hub}`)
    } finally {
      await context.close()
    }
  }, 60_000)
})
