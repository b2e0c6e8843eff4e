import { ConfigProvider, Context, Effect, Exit, Layer, References, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { presentSecrets, ServerConfig } from "../../apps/server/Config.ts"
import { makeServer } from "../../apps/server/Server.ts"
import { Browser } from "../support/Browser.ts"
import { startOpenIdProvider, type RunningProvider, type UpstreamAccount } from "../support/OpenIdProvider.ts"
import { freePort } from "../support/ServerProcess.ts"

const adminKey = "hub-admin-key-for-the-oidc-test"
const upstreamSecret = "the-hub-at-the-organisations-provider"

/** A fresh database on the Postgres server of DATABASE_URL, dropped afterwards. */
const freshPostgres = async () => {
  const server = process.env["DATABASE_URL"]!
  const name = `hitl_oidc_${Math.random().toString(36).slice(2, 10)}`
  const admin = new pg.Client({ connectionString: server })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = new URL(server)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: async () => {
      const again = new pg.Client({ connectionString: server })
      await again.connect()
      await again.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await again.end()
    }
  }
}

/** The bundled server, in this process, until `scope` closes; answers its services (the database among them). */
const startInstance = async (
  env: Record<string, string>,
  ports: { readonly hub: number; readonly decisions: number; readonly tasks: number },
  scope: Scope.Closeable
) => {
  const config = await Effect.runPromise(
    Effect.gen(function* () {
      return yield* ServerConfig
    }).pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env }))))
  )
  return Effect.runPromise(
    Layer.buildWithScope(makeServer({ config, secrets: presentSecrets(config), ports }), scope).pipe(
      Effect.provideService(References.MinimumLogLevel, "None")
    )
  )
}

const databases: ReadonlyArray<{ readonly name: string; readonly postgres: boolean }> = [
  { name: "embedded", postgres: false },
  ...(process.env["DATABASE_URL"] ? [{ name: "postgres", postgres: true }] : [])
]

describe.each(databases)("OpenID Connect both ways, in the bundled server ($name)", ({ postgres }) => {
  let upstream: RunningProvider
  let hub: string
  let tasks: string
  let scope: Scope.Closeable
  let sql: SqlClient.SqlClient
  let dropDatabase = async () => {}
  let second: { readonly hub: number; readonly decisions: number; readonly tasks: number } | undefined

  beforeAll(async () => {
    const ports = { hub: await freePort(), decisions: await freePort(), tasks: await freePort() }
    hub = `http://127.0.0.1:${ports.hub}`
    tasks = `http://127.0.0.1:${ports.tasks}`
    upstream = await startOpenIdProvider([
      { clientId: "hub", clientSecret: upstreamSecret, redirectUri: `${hub}/auth/oidc/callback` }
    ])
    const database = postgres ? await freshPostgres() : undefined
    if (database !== undefined) dropDatabase = database.drop
    const env: Record<string, string> = {
      DATA_DIR: mkdtempSync(join(tmpdir(), "hitl-oidc-")),
      ...(database === undefined ? {} : { DATABASE_URL: database.url }),
      HUB_ADMIN_KEY: adminKey,
      HUB_SECRETS_KEY: "hub-secrets-key-for-the-oidc-test",
      TASKS_SECRETS_KEY: "tasks-secrets-key-for-the-oidc-test",
      TASKS_OIDC_CLIENT_SECRET: "tasks-client-secret-for-the-oidc-test",
      HUB_OIDC_ISSUER: upstream.issuer,
      HUB_OIDC_CLIENT_ID: "hub",
      HUB_OIDC_CLIENT_SECRET: upstreamSecret
    }
    scope = await Effect.runPromise(Scope.make())
    const context = await startInstance(env, ports, scope)
    sql = Context.get(context as Context.Context<SqlClient.SqlClient>, SqlClient.SqlClient)
    if (postgres) {
      // A second instance on the same database, behind the same public addresses (see the last test).
      second = { hub: await freePort(), decisions: await freePort(), tasks: await freePort() }
      await startInstance({ ...env, HUB_PUBLIC_URL: hub, TASKS_PUBLIC_URL: tasks }, second, scope)
    }
  })

  afterAll(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await upstream.close()
    await dropDatabase()
  })

  const admin = (method: string, path: string, body?: unknown) =>
    fetch(`${hub}${path}`, {
      method,
      headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })

  /** A person in the directory, and the same person at the organisation's provider. */
  const member = async (name: string, emailVerified = true): Promise<UpstreamAccount> => {
    const id = Math.random().toString(36).slice(2, 10)
    const account = { sub: `sub-${id}`, email: `${name.toLowerCase()}.${id}@acme.test`, emailVerified, name }
    assert.strictEqual((await admin("POST", "/api/v1/admin/users", { email: account.email, name })).status, 201)
    return account
  }

  const json = async (browser: Browser, url: string) => {
    const response = await browser.fetch(url)
    return { status: response.status, body: (await response.json()) as any }
  }

  /** Signs in at the hub with the organisation's provider; answers where the hub sent the browser. */
  const hubSignIn = (browser: Browser, account: UpstreamAccount, next: string) => {
    upstream.signInAs(account)
    return browser.navigateUntil(`${hub}/auth/oidc?next=${encodeURIComponent(next)}`, `${hub}${next}`)
  }

  it("publishes its discovery document: the hub is the issuer, code flow with S256 PKCE", async () => {
    const discovery = await json(new Browser(), `${hub}/.well-known/openid-configuration`)
    assert.strictEqual(discovery.status, 200)
    assert.strictEqual(discovery.body.issuer, hub)
    assert.strictEqual(discovery.body.authorization_endpoint, `${hub}/oidc/auth`)
    assert.strictEqual(discovery.body.token_endpoint, `${hub}/oidc/token`)
    assert.deepStrictEqual(discovery.body.response_types_supported, ["code"])
    assert.include(discovery.body.code_challenge_methods_supported, "S256")
  })

  it("signs a directory member in at the hub through the organisation's provider, then to `next`", async () => {
    const browser = new Browser()
    const ada = await member("Ada")
    assert.strictEqual(await hubSignIn(browser, ada, "/welcome"), `${hub}/welcome`)
    assert.isDefined(browser.cookie("hub_session"))
    const me = await json(browser, `${hub}/api/v1/me`)
    assert.strictEqual(me.status, 200)
    assert.strictEqual(me.body.data.user.email, ada.email)
  })

  it("refuses an email the organisation's provider did not verify, and a person not in the directory", async () => {
    for (const account of [
      await member("Unverified", false),
      { sub: "sub-stranger", email: "stranger@elsewhere.test", emailVerified: true, name: "Stranger" }
    ]) {
      const browser = new Browser()
      upstream.signInAs(account)
      const callback = await browser.navigateUntil(`${hub}/auth/oidc`, `${hub}/auth/oidc/callback`)
      const answer = await browser.fetch(callback)
      assert.strictEqual(answer.status, 403)
      assert.include(answer.headers.get("content-type"), "text/html")
      assert.isUndefined(browser.cookie("hub_session"))
    }
  })

  it("refuses a hub sign-in whose state or nonce was tampered with, and a replayed code", async () => {
    const ada = await member("Mallory")
    for (const tamper of [
      (u: URL) => u.searchParams.set("state", "forged"),
      (u: URL) => u.searchParams.set("nonce", "forged"),
      (u: URL) => u.searchParams.delete("nonce")
    ]) {
      const browser = new Browser()
      upstream.signInAs(ada)
      const authorize = new URL(await browser.navigateUntil(`${hub}/auth/oidc`, upstream.issuer))
      tamper(authorize)
      const callback = await browser.navigateUntil(authorize.toString(), `${hub}/auth/oidc/callback`)
      assert.strictEqual((await browser.fetch(callback)).status, 400)
      assert.isUndefined(browser.cookie("hub_session"))
    }
    const browser = new Browser()
    upstream.signInAs(ada)
    const callback = await browser.navigateUntil(`${hub}/auth/oidc`, `${hub}/auth/oidc/callback`)
    const pending = browser.cookie("hub_oidc_sign_in")!
    assert.strictEqual((await browser.fetch(callback)).status, 303)
    const replay = new Browser()
    replay.setCookie("hub_oidc_sign_in", pending, "/auth/oidc/callback")
    assert.strictEqual((await replay.fetch(callback)).status, 400)
    assert.isUndefined(replay.cookie("hub_session"))
  })

  it("signs a person already signed in at the hub in to the task inbox without asking anything", async () => {
    const browser = new Browser()
    const ada = await member("Grace")
    await hubSignIn(browser, ada, "/home")
    const asked = upstream.interactions()
    const landed = await browser.navigateUntil(`${tasks}/auth/login?next=/inbox`, `${tasks}/inbox`)
    assert.strictEqual(landed, `${tasks}/inbox`)
    assert.strictEqual(upstream.interactions(), asked)
    assert.deepStrictEqual(await json(browser, `${tasks}/auth/me`), {
      status: 200,
      body: { user: { email: ada.email, name: "Grace" } }
    })
    // The provider keeps no code, grant or session in the clear.
    const rows = await Effect.runPromise(
      sql<{ payload: string; id_hash: string }>`SELECT payload, id_hash FROM hub.oidc_artifacts`
    )
    assert.isAbove(rows.length, 0)
    for (const row of rows) {
      assert.match(row.payload, /^v1\./)
      assert.notInclude(row.payload, ada.email)
    }
  })

  it("sends a person not signed in to the hub's sign-in, then back to the task inbox once signed in", async () => {
    const browser = new Browser()
    const linus = await member("Linus")
    const signInPage = new URL(await browser.navigateUntil(`${tasks}/auth/login?next=/inbox`, `${hub}/?next=`))
    const next = signInPage.searchParams.get("next")!
    assert.match(next, /^\/oidc\/interaction\//)
    upstream.signInAs(linus)
    const landed = await browser.navigateUntil(`${hub}/auth/oidc?next=${encodeURIComponent(next)}`, `${tasks}/inbox`)
    assert.strictEqual(landed, `${tasks}/inbox`)
    const me = await json(browser, `${tasks}/auth/me`)
    assert.strictEqual(me.status, 200)
    assert.strictEqual(me.body.user.email, linus.email)
  })

  it("refuses a code of the hub's provider used twice", async () => {
    const browser = new Browser()
    await hubSignIn(browser, await member("Replay"), "/home")
    const callback = await browser.navigateUntil(`${tasks}/auth/login`, `${tasks}/auth/callback`)
    const pending = browser.cookie("tasks_sign_in")!
    assert.strictEqual((await browser.fetch(callback)).status, 303)
    const replay = new Browser()
    replay.setCookie("tasks_sign_in", pending, "/auth/callback")
    assert.strictEqual((await replay.fetch(callback)).status, 401)
    assert.strictEqual((await replay.fetch(`${tasks}/auth/me`)).status, 401)
  })

  it("ends each session at its logout; signed out of the hub, the task inbox's next sign-in asks again", async () => {
    const browser = new Browser()
    await hubSignIn(browser, await member("Barbara"), "/home")
    await browser.navigateUntil(`${tasks}/auth/login?next=/inbox`, `${tasks}/inbox`)
    const out = await browser.fetch(`${tasks}/auth/logout`, { method: "POST", headers: { origin: tasks } })
    assert.strictEqual(out.status, 204)
    assert.strictEqual((await browser.fetch(`${tasks}/auth/me`)).status, 401)

    const hubOut = await browser.fetch(`${hub}/auth/logout`, { method: "POST", headers: { origin: hub } })
    assert.strictEqual(hubOut.status, 204)
    assert.strictEqual((await browser.fetch(`${hub}/api/v1/me`)).status, 401)
    // The provider's own session cookie is still in the browser, yet the hub's session decides.
    assert.isDefined(browser.cookie("hub_oidc_session"))
    const again = await browser.navigateUntil(`${tasks}/auth/login?next=/inbox`, `${hub}/?next=`)
    assert.match(new URL(again).searchParams.get("next")!, /^\/oidc\/interaction\//)
    assert.strictEqual((await browser.fetch(`${tasks}/auth/me`)).status, 401)
  })

  // Only on a Postgres server: the embedded database belongs to one process.
  if (postgres)
    it("serves every step on either instance: two servers on one database, requests alternating", async () => {
      const other = second!
      const hubPort = new URL(hub).port
      const tasksPort = new URL(tasks).port
      let turn = 0
      // Every other request to the hub or the task inbox goes to the second instance.
      const browser = new Browser((url) => {
        if (url.port !== hubPort && url.port !== tasksPort) return url
        turn += 1
        if (turn % 2 === 0) return url
        const moved = new URL(url)
        moved.port = String(url.port === hubPort ? other.hub : other.tasks)
        return moved
      })
      const ada = await member("Twice")
      upstream.signInAs(ada)
      const signInPage = new URL(await browser.navigateUntil(`${tasks}/auth/login?next=/inbox`, `${hub}/?next=`))
      const next = signInPage.searchParams.get("next")!
      const landed = await browser.navigateUntil(`${hub}/auth/oidc?next=${encodeURIComponent(next)}`, `${tasks}/inbox`)
      assert.strictEqual(landed, `${tasks}/inbox`)
      assert.isAtLeast(turn, 8)
      for (let i = 0; i < 2; i++) {
        const me = await json(browser, `${tasks}/auth/me`)
        assert.strictEqual(me.status, 200)
        assert.strictEqual(me.body.user.email, ada.email)
      }
    })
})
