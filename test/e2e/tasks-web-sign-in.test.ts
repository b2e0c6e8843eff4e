import { Context, Effect, Exit, Layer, Redacted, Scope } from "effect"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import type { TasksWebSignIn } from "../../adapters/http/tasks/SignIn.ts"
import { hashSecret } from "../../core/auth/IssuedSecret.ts"
import { SessionStore } from "../../core/tasks/SessionStore.ts"
import { Browser } from "../support/Browser.ts"
import { sqlBackends } from "../support/Databases.ts"
import { testServiceSecretsKey } from "../support/DecisionsMemory.ts"
import { startOpenIdProvider, type RunningProvider, type UpstreamAccount } from "../support/OpenIdProvider.ts"
import { freePort } from "../support/ServerProcess.ts"
import {
  tasksMemoryData,
  tasksServer,
  tasksSqlData,
  TasksServer,
  opsKey,
  type TasksData
} from "../support/TasksStack.ts"

const clientSecret = "tasks-client-secret-for-the-test-0123"

const backends: ReadonlyArray<{ readonly name: string; readonly data: TasksData }> = [
  { name: "memory", data: tasksMemoryData },
  ...sqlBackends.map((backend) => ({ name: backend.name, data: tasksSqlData(backend) }))
]

const person = (name: string, emailVerified = true): UpstreamAccount => {
  const id = Math.random().toString(36).slice(2, 10)
  return { sub: `sub-${id}`, email: `${name.toLowerCase()}.${id}@example.com`, emailVerified, name }
}

describe.each(backends)("the task inbox's web sign-in, through a real OpenID provider ($name)", ({ data }) => {
  let provider: RunningProvider
  let base: string
  let scope: Scope.Closeable
  let context: Context.Context<TasksServer | SessionStore>

  beforeAll(async () => {
    const port = await freePort()
    base = `http://127.0.0.1:${port}`
    provider = await startOpenIdProvider([{ clientId: "tasks", clientSecret, redirectUri: `${base}/auth/callback` }])
    const web: TasksWebSignIn = {
      publicUrl: base,
      hubIssuer: provider.issuer,
      clientId: "tasks",
      clientSecret: Redacted.make(clientSecret),
      secretsKey: Redacted.value(testServiceSecretsKey!),
      allowHttp: true
    }
    scope = await Effect.runPromise(Scope.make())
    context = await Effect.runPromise(Layer.buildWithScope(tasksServer(data, web, port), scope))
  })

  afterAll(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await provider.close()
  })

  const sessions = () => Context.get(context, SessionStore)

  /** Signs `account` in from `/auth/login` to the redirect back into the task inbox. */
  const signIn = async (browser: Browser, account: UpstreamAccount, next = "/inbox") => {
    provider.signInAs(account)
    return browser.navigateUntil(`${base}/auth/login?next=${encodeURIComponent(next)}`, `${base}/inbox`)
  }

  /** Runs the flow until the provider sends the browser back to the callback; answers that callback URL. */
  const untilCallback = async (browser: Browser, account: UpstreamAccount, tamper?: (authorize: URL) => void) => {
    provider.signInAs(account)
    const authorize = new URL(await browser.navigateUntil(`${base}/auth/login`, provider.issuer))
    tamper?.(authorize)
    return browser.navigateUntil(authorize.toString(), `${base}/auth/callback`)
  }

  const me = (browser: Browser, headers: Record<string, string> = {}) =>
    browser
      .fetch(`${base}/auth/me`, { headers })
      .then(async (r) => ({ status: r.status, json: (await r.json()) as any }))

  it("signs a person in through the provider: back to `next`, then /auth/me knows them without a credential typed", async () => {
    const browser = new Browser()
    const ada = person("Ada")
    const landed = await signIn(browser, ada)
    assert.strictEqual(landed, `${base}/inbox`)
    assert.deepStrictEqual(await me(browser), { status: 200, json: { user: { email: ada.email, name: "Ada" } } })

    // The cookie holds an opaque value whose hash alone is stored.
    const cookie = browser.cookie("tasks_session")!
    assert.isDefined(await Effect.runPromise(sessions().find(hashSecret(cookie), new Date().toISOString())))
    assert.isUndefined(await Effect.runPromise(sessions().find(cookie, new Date().toISOString())))
    // The pending sign-in's cookie is gone once used.
    assert.isUndefined(browser.cookie("tasks_sign_in"))
  })

  it("sets the session cookie HttpOnly, SameSite=Lax, Path=/ and not Secure on loopback", async () => {
    const browser = new Browser()
    provider.signInAs(person("Grace"))
    const callback = await browser.navigateUntil(`${base}/auth/login`, `${base}/auth/callback`)
    const answer = await browser.fetch(callback)
    assert.strictEqual(answer.status, 303)
    const line = answer.headers.getSetCookie().find((c) => c.startsWith("tasks_session="))!
    assert.match(line, /HttpOnly/)
    assert.match(line, /SameSite=Lax/)
    assert.match(line, /Path=\//)
    assert.notMatch(line, /Secure/)
  })

  it("lets the session call /api/* as X-API-Key does, and refuses a change sent from another site's page", async () => {
    const browser = new Browser()
    await signIn(browser, person("Linus"))
    assert.strictEqual((await browser.fetch(`${base}/api/tasks/mine`)).status, 200)
    const create = (origin: string) =>
      browser.fetch(`${base}/api/tasks`, {
        method: "POST",
        headers: { "content-type": "application/json", origin },
        body: JSON.stringify({ title: "From the web" })
      })
    const foreign = await create("https://evil.example")
    assert.strictEqual(foreign.status, 403)
    assert.deepStrictEqual(await foreign.json(), { error: "Cross-site request refused" })
    assert.strictEqual((await create(base)).status, 201)
    const referred = await browser.fetch(`${base}/api/tasks`, {
      method: "POST",
      headers: { "content-type": "application/json", referer: "https://evil.example/page" },
      body: JSON.stringify({ title: "From the web" })
    })
    assert.strictEqual(referred.status, 403)
  })

  it("does not take an API key at /auth/me", async () => {
    assert.strictEqual((await me(new Browser(), { "x-api-key": opsKey.key })).status, 401)
    const anonymous = await me(new Browser())
    assert.strictEqual(anonymous.status, 401)
    assert.isString(anonymous.json.error)
  })

  it("refuses a callback whose state was tampered with", async () => {
    const browser = new Browser()
    const callback = await untilCallback(browser, person("Mallory"), (authorize) =>
      authorize.searchParams.set("state", "forged-state")
    )
    const answer = await browser.fetch(callback)
    assert.strictEqual(answer.status, 401)
    assert.isUndefined(browser.cookie("tasks_session"))
    assert.strictEqual((await me(browser)).status, 401)
  })

  it("refuses an ID token whose nonce was tampered with, or left out", async () => {
    for (const tamper of [
      (authorize: URL) => authorize.searchParams.set("nonce", "forged-nonce"),
      (authorize: URL) => authorize.searchParams.delete("nonce")
    ]) {
      const browser = new Browser()
      const callback = await untilCallback(browser, person("Mallory"), tamper)
      assert.strictEqual((await browser.fetch(callback)).status, 401)
      assert.strictEqual((await me(browser)).status, 401)
    }
  })

  it("refuses a callback that this browser did not start", async () => {
    const started = new Browser()
    const callback = await untilCallback(started, person("Eve"))
    const other = new Browser()
    assert.strictEqual((await other.fetch(callback)).status, 401)
    assert.strictEqual((await me(other)).status, 401)
  })

  it("refuses an email the provider does not vouch for", async () => {
    const browser = new Browser()
    const callback = await untilCallback(browser, person("Unverified", false))
    assert.strictEqual((await browser.fetch(callback)).status, 401)
    assert.strictEqual((await me(browser)).status, 401)
  })

  it("refuses a code used a second time", async () => {
    const browser = new Browser()
    const callback = await untilCallback(browser, person("Replay"))
    const pending = browser.cookie("tasks_sign_in")!
    assert.strictEqual((await browser.fetch(callback)).status, 303)
    const attacker = new Browser()
    attacker.setCookie("tasks_sign_in", pending, "/auth/callback")
    assert.strictEqual((await attacker.fetch(callback)).status, 401)
    assert.strictEqual((await me(attacker)).status, 401)
  })

  it("ends the session at logout (a logout from another site's page is refused)", async () => {
    const browser = new Browser()
    await signIn(browser, person("Barbara"))
    const cookie = browser.cookie("tasks_session")!
    const forged = await browser.fetch(`${base}/auth/logout`, {
      method: "POST",
      headers: { origin: "https://evil.example" }
    })
    assert.strictEqual(forged.status, 403)
    assert.strictEqual((await me(browser)).status, 200)
    const out = await browser.fetch(`${base}/auth/logout`, { method: "POST", headers: { origin: base } })
    assert.strictEqual(out.status, 204)
    assert.isUndefined(browser.cookie("tasks_session"))
    const replayed = new Browser()
    replayed.setCookie("tasks_session", cookie)
    assert.strictEqual((await me(replayed)).status, 401)
  })
})

describe("the task inbox's web sign-in, not configured", () => {
  it("answers 501 {error} at /auth/login", async () => {
    const scope = await Effect.runPromise(Scope.make())
    try {
      const context = await Effect.runPromise(Layer.buildWithScope(tasksServer(tasksMemoryData), scope))
      const { baseUrl } = Context.get(context, TasksServer)
      const answer = await fetch(`${baseUrl}/auth/login`, { redirect: "manual" })
      assert.strictEqual(answer.status, 501)
      assert.isString(((await answer.json()) as { error: string }).error)
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })
})
