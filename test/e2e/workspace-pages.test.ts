import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { FactOutboxMemory } from "../../adapters/memory/hub/FactOutboxMemory.ts"
import { FactOutboxSql } from "../../adapters/sql/hub/FactOutboxSql.ts"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { embeddedPage, type EmbedSessionConfig } from "../../adapters/http/EmbedSession.ts"
import { HubPersonAuthLayer, hubSessionCookie } from "../../adapters/http/hub/PersonAuth.ts"
import { WorkspaceApi } from "../../adapters/http/hub/WorkspaceApi.ts"
import { WorkspaceHandlers } from "../../adapters/http/hub/WorkspaceHandlers.ts"
import { ServiceCallsHttp } from "../../adapters/http/ServiceCallsHttp.ts"
import { serviceRoutes } from "../../adapters/http/ServiceHttp.ts"
import { guardedLookup } from "../../adapters/http/WebhookSenderHttp.ts"
import { DirectoryMemory } from "../../adapters/memory/hub/DirectoryMemory.ts"
import { ServiceStoreMemory } from "../../adapters/memory/hub/ServiceStoreMemory.ts"
import { IdempotencyStoreMemory } from "../../adapters/memory/IdempotencyStoreMemory.ts"
import { TransactionsMemory } from "../../adapters/memory/TransactionsMemory.ts"
import { DirectorySql } from "../../adapters/sql/hub/DirectorySql.ts"
import { hubMigrations } from "../../adapters/sql/hub/migrations.ts"
import { ServiceStoreSql } from "../../adapters/sql/hub/ServiceStoreSql.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { TransactionsSql } from "../../adapters/sql/TransactionsSql.ts"
import { HubDirectoryUseCases, HubWorkspaceUseCases } from "../../apps/server/hub/HubLayers.ts"
import { HubSignInStoresMemory, HubSignInStoresSql } from "../../apps/server/hub/HubSignInRuntime.ts"
import { verify } from "../../core/auth/IdentityToken.ts"
import { Directory, type Installation } from "../../core/hub/Directory.ts"
import { Registry } from "../../core/hub/Registry.ts"
import { Sessions } from "../../core/hub/Sessions.ts"
import { sqlBackends, type SqlBackend } from "../support/Databases.ts"
import { DecisionsMemory } from "../support/DecisionsMemory.ts"
import { decisionsSqlOn } from "../support/DecisionsSql.ts"
import { request, serveForTest, type Answer } from "../support/Http.ts"
import { testDecisionsKeys } from "../support/ServiceSettings.ts"
import { serveDecisions } from "../support/DecisionsServed.ts"

const { issuer, apiKey: decisionsApiKey, embedKey: decisionsEmbedKey } = testDecisionsKeys
const hubSecretsKey = "hub-secrets-key-for-workspace-tests-0123456"
const embedSecretsKey = "embed-test-service-secrets-key-0123456789"

/** A registered third-party service: pages with the hub's key and token, one that fails, and an embeddable page. */
const thirdPartyRoutes = (credentials: () => { readonly apiKey: string; readonly embedKey: string }) =>
  HttpRouter.use(
    Effect.fnUntraced(function* (router) {
      const identity = Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        if (request.headers["x-notes-api-key"] !== credentials().apiKey) return undefined
        const token = request.headers["x-workspace-token"] ?? ""
        const now = Math.floor(Date.now() / 1000)
        return yield* Effect.option(
          verify({ token, key: credentials().embedKey, issuer, audience: "notes", nowSeconds: now })
        )
      })
      const withIdentity = (answer: (email: string) => HttpServerResponse.HttpServerResponse) =>
        Effect.map(identity, (found) =>
          found === undefined || found._tag === "None"
            ? HttpServerResponse.jsonUnsafe({ error: { code: "UNAUTHORIZED", message: "no" } }, { status: 401 })
            : answer(found.value.email)
        )
      yield* router.add(
        "GET",
        "/api/v1/pages",
        withIdentity(() =>
          HttpServerResponse.jsonUnsafe({ data: { pages: [{ id: "hello", title: "Hello", icon: "star", order: 1 }] } })
        )
      )
      yield* router.add(
        "GET",
        "/api/v1/pages/hello",
        withIdentity((email) =>
          HttpServerResponse.jsonUnsafe({
            data: { page: { id: "hello", title: `Hello ${email}`, blocks: [{ type: "sparkle", glitter: 3 }] } }
          })
        )
      )
      yield* router.add(
        "GET",
        "/api/v1/pages/broken",
        withIdentity(() => HttpServerResponse.text("stack trace at /srv/notes/app.js:12", { status: 500 }))
      )
      yield* router.add(
        "GET",
        "/api/v1/pages/garbage",
        withIdentity(() => HttpServerResponse.jsonUnsafe({ data: { page: { title: 42 } } }))
      )
      const embed: EmbedSessionConfig = {
        cookieName: "notes_embed",
        secretsKey: embedSecretsKey,
        secure: false,
        verify: (token, nowSeconds) =>
          verify({ token, key: credentials().embedKey, issuer, audience: "notes", nowSeconds })
      }
      yield* router.add(
        "GET",
        "/embed",
        embeddedPage(embed, (who) =>
          Effect.succeed(HttpServerResponse.text(`Notes for ${who.email} in ${who.companyId ?? "no organization"}`))
        )()
      )
    })
  )

/** The hub's stores on memory, or on a fresh migrated database of the backend. */
const hubStorage = (backend: SqlBackend | undefined) =>
  backend === undefined
    ? Layer.mergeAll(DirectoryMemory, ServiceStoreMemory, FactOutboxMemory, HubSignInStoresMemory).pipe(
        Layer.provideMerge(TransactionsMemory)
      )
    : Layer.mergeAll(DirectorySql, ServiceStoreSql, FactOutboxSql, HubSignInStoresSql).pipe(
        Layer.provideMerge(TransactionsSql),
        Layer.provide(migrationsLayer("hub", hubMigrations)),
        Layer.provide(backend.layer)
      )

/**
 * The hub's workspace routes with sessions, the registry and token minting, in front of the real decisions
 * service and a third-party service, each on its own loopback port. An organization `acme` with ada (a
 * holder of the finance role) and an admin; decisions installed for it.
 */
const stack = (backend: SqlBackend | undefined) =>
  Effect.gen(function* () {
    const hub = yield* Layer.build(
      HubWorkspaceUseCases({ issuer }).pipe(
        Layer.provide(ServiceCallsHttp({ allowLoopback: true, guardLookup: guardedLookup, timeoutMs: 5_000 })),
        Layer.provideMerge(Sessions.layer()),
        Layer.provideMerge(
          HubDirectoryUseCases({ secretsKey: hubSecretsKey, allowLoopbackHttp: true }, hubStorage(backend))
        )
      )
    )
    const decisionsData =
      backend === undefined ? Layer.merge(DecisionsMemory, IdempotencyStoreMemory) : decisionsSqlOn(backend)
    const decisions = yield* serveDecisions(decisionsData)
    let notesCredentials = { apiKey: "", embedKey: "" }
    const notes = yield* serveForTest(thirdPartyRoutes(() => notesCredentials))
    const hubUrl = yield* serveForTest(
      serviceRoutes({
        api: WorkspaceApi,
        handlers: WorkspaceHandlers.pipe(Layer.provide(HubPersonAuthLayer({ publicUrl: "http://127.0.0.1" }))),
        errors: { dialect: "hub", maxBodyBytes: 64 * 1024 }
      }).pipe(Layer.provide(Layer.succeedContext(hub)))
    )

    const registry = Context.get(hub, Registry)
    const directory = Context.get(hub, Directory)
    const sessions = Context.get(hub, Sessions)
    const passing = { ranAt: new Date().toISOString(), passed: true, checks: [] }
    yield* registry.registerFirstParty({
      id: "decisions",
      displayName: "Decisions",
      baseUrl: decisions.baseUrl,
      apiKeyHeader: "X-Decisions-Api-Key",
      resourcePath: "/api/v1/workspace/decisions",
      pages: true,
      credentials: { apiKey: decisionsApiKey, embedKey: decisionsEmbedKey }
    })
    const registered = yield* registry.register({
      id: "notes",
      displayName: "Notes",
      baseUrl: notes.baseUrl,
      apiKeyHeader: "X-Notes-Api-Key",
      pages: true,
      embedUrl: `${notes.baseUrl}/embed?view=board`
    })
    notesCredentials = registered.credentials
    for (const id of ["decisions", "notes"]) {
      yield* registry.recordConformance(id, passing)
      yield* registry.promote(id)
    }

    const now = new Date().toISOString()
    const org = { id: "acme", name: "Acme", tier: "free" as const, createdAt: now }
    yield* directory.createOrg({ ...org, archivedAt: null, mergedIntoOrgId: null, deletedAt: null })
    const person = (email: string, role: "ADMIN" | "MEMBER", orgId = "acme") =>
      Effect.gen(function* () {
        const id = `user-${email}`
        yield* directory.createUser({ id, email, name: null, verified: true, createdAt: now })
        yield* directory.addMember({
          orgId,
          userId: id,
          role,
          department: null,
          departmentRole: null,
          departments: [],
          roles: [],
          createdAt: now
        })
        return (yield* sessions.start(id)).cookieValue
      })
    const install = (serviceId: string, embed: boolean, orgId = "acme") =>
      directory.saveInstallation({
        orgId,
        serviceId,
        active: true,
        epoch: 0,
        consents: { companyId: true, accessClaims: true, embed },
        permissions: [],
        updatedAt: now
      } satisfies Installation)
    yield* install("decisions", false)
    const admin = yield* person("admin@acme.test", "ADMIN")
    const ada = yield* person("ada@acme.test", "MEMBER")
    return {
      hubUrl: hubUrl.baseUrl,
      decisionsUrl: decisions.baseUrl,
      notesUrl: notes.baseUrl,
      admin,
      ada,
      install,
      person,
      directory
    }
  })

/** A call to the hub as a browser of the signed-in person makes it. */
const hub = (baseUrl: string, cookie: string) => ({
  get: (path: string) => request(`${baseUrl}${path}`, { headers: { cookie: `${hubSessionCookie}=${cookie}` } }),
  post: (path: string, body: unknown, headers: Record<string, string> = {}) =>
    request(`${baseUrl}${path}`, {
      method: "POST",
      headers: { cookie: `${hubSessionCookie}=${cookie}`, "content-type": "application/json", ...headers },
      body: JSON.stringify(body)
    })
})

const code = (answer: Answer) => answer.json?.error?.code

const backends = [{ name: "memory", backend: undefined }, ...sqlBackends.map((b) => ({ name: b.name, backend: b }))]

describe.each(backends)("the hub's workspace in front of the services ($name stores)", ({ backend }) => {
  it.live(
    "lists apps, opens a decision through the proxy, and chooses once with an Idempotency-Key sent twice",
    () =>
      Effect.gen(function* () {
        const s = yield* stack(backend)
        const admin = hub(s.hubUrl, s.admin)
        const ada = hub(s.hubUrl, s.ada)

        const unsigned = yield* request(`${s.hubUrl}/api/v1/workspace/apps`)
        assert.strictEqual(unsigned.status, 401)

        const apps = yield* ada.get("/api/v1/workspace/apps")
        assert.strictEqual(apps.status, 200, apps.text)
        assert.deepStrictEqual(apps.json.data, [
          { id: "decisions", name: "Decisions", pages: true, embedUrl: null, appUrl: null }
        ])

        // The admin sets the role up through the proxy's actions; a caller key is shown once in the answer.
        for (const [actionId, values] of [
          ["roles.create", { slug: "finance", name: "Finance" }],
          ["role.finance.assign", { memberEmail: "ada@acme.test" }]
        ] as const) {
          const done = yield* admin.post(`/api/v1/workspace/apps/decisions/actions/${actionId}`, values)
          assert.strictEqual(done.status, 200, done.text)
        }
        const key = yield* admin.post("/api/v1/workspace/apps/decisions/actions/keys.create", { name: "agent" })
        assert.match(key.json.data.secret, /^dcd_/)
        const created = yield* request(`${s.decisionsUrl}/api/v1/decisions`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            authorization: `Bearer ${key.json.data.secret}`,
            "idempotency-key": "create-1"
          },
          body: JSON.stringify({ title: "Ship it?", roleSlug: "finance", options: [{ label: "Yes" }, { label: "No" }] })
        })
        assert.strictEqual(created.status, 201, created.text)
        const decision = created.json.data.decision

        const pages = yield* ada.get("/api/v1/workspace/apps/decisions/pages")
        assert.strictEqual(pages.status, 200, pages.text)
        assert.strictEqual(pages.json.data.pages[0].id, "inbox")
        const inbox = yield* ada.get("/api/v1/workspace/apps/decisions/pages/inbox?status=pending")
        assert.strictEqual(inbox.status, 200, inbox.text)
        assert.include(inbox.text, `/apps/decisions/decision-${decision.id}`)
        const badQuery = yield* ada.get("/api/v1/workspace/apps/decisions/pages/inbox?status=sleeping")
        assert.strictEqual(badQuery.status, 400)

        const page = yield* ada.get(`/api/v1/workspace/apps/decisions/pages/decision-${decision.id}`)
        assert.strictEqual(page.status, 200, page.text)
        const row = page.json.data.page.blocks.find((b: { type: string }) => b.type === "actionRow")
        const yes = row.actions[0].actionId as string
        const path = `/api/v1/workspace/apps/decisions/actions/${encodeURIComponent(yes)}`
        const first = yield* ada.post(path, {}, { "idempotency-key": "click-1" })
        const second = yield* ada.post(path, {}, { "idempotency-key": "click-1" })
        assert.strictEqual(first.status, 200, first.text)
        assert.deepStrictEqual(first.json, { data: { result: "ok", refresh: true } })
        assert.strictEqual(second.text, first.text)
        const read = yield* request(`${s.decisionsUrl}/api/v1/decisions/${decision.id}`, {
          headers: { authorization: `Bearer ${key.json.data.secret}` }
        })
        assert.strictEqual(read.json.data.decision.resolution.optionId, decision.options[0].id)
        assert.strictEqual(read.json.data.decision.resolution.decidedBy, "ada@acme.test")

        // The service's refusals come through with their status and code.
        const again = yield* ada.post(path, {}, { "idempotency-key": "click-2" })
        assert.strictEqual(again.status, 409)
        assert.strictEqual(code(again), "invalid_transition")
        const notAdmin = yield* ada.post("/api/v1/workspace/apps/decisions/actions/keys.create", { name: "x" })
        assert.strictEqual(notAdmin.status, 403)
        const missing = yield* ada.get("/api/v1/workspace/apps/decisions/pages/decision-01ARZ3NDEKTSV4RRFFQ69G5FAV")
        assert.strictEqual(missing.status, 404)

        // A change carried from another site's page is refused before it reaches the service.
        const crossSite = yield* ada.post(path, {}, { origin: "https://evil.example" })
        assert.strictEqual(crossSite.status, 403)
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "keeps organizations apart: an app another organization installed is not the person's",
    () =>
      Effect.gen(function* () {
        const s = yield* stack(backend)
        yield* s.directory.createOrg({
          id: "globex",
          name: "Globex",
          tier: "free",
          createdAt: new Date().toISOString(),
          archivedAt: null,
          mergedIntoOrgId: null,
          deletedAt: null
        })
        yield* s.install("notes", true, "globex")
        const hank = hub(s.hubUrl, yield* s.person("hank@globex.test", "MEMBER", "globex"))
        const ada = hub(s.hubUrl, s.ada)
        assert.deepStrictEqual(
          (yield* hank.get("/api/v1/workspace/apps")).json.data.map((a: { id: string }) => a.id),
          ["notes"]
        )
        for (const path of [
          "/api/v1/workspace/apps/notes/pages",
          "/api/v1/workspace/apps/notes/pages/hello",
          "/api/v1/workspace/apps/notes/embed",
          "/api/v1/workspace/apps/unknown/pages"
        ]) {
          const answer = yield* ada.get(path)
          assert.strictEqual(answer.status, 404, path)
          assert.deepStrictEqual(answer.json, { error: { code: "NOT_FOUND", message: "No such app." } }, path)
        }
        const hello = yield* hank.get("/api/v1/workspace/apps/notes/pages/hello")
        assert.strictEqual(hello.status, 200, hello.text)
        assert.deepStrictEqual(hello.json.data.page, {
          id: "hello",
          title: "Hello hank@globex.test",
          blocks: [{ type: "sparkle", glitter: 3 }]
        })
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "embeds a consenting organization's app: wt exchanged for a sealed cookie; 403 EMBED_NOT_CONSENTED otherwise",
    () =>
      Effect.gen(function* () {
        const s = yield* stack(backend)
        const ada = hub(s.hubUrl, s.ada)
        yield* s.install("notes", false)
        const refused = yield* ada.get("/api/v1/workspace/apps/notes/embed")
        assert.strictEqual(refused.status, 403)
        assert.strictEqual(code(refused), "EMBED_NOT_CONSENTED")
        const noEmbed = yield* ada.get("/api/v1/workspace/apps/decisions/embed")
        assert.strictEqual(noEmbed.status, 404)

        yield* s.install("notes", true)
        const apps = yield* ada.get("/api/v1/workspace/apps")
        assert.deepInclude(apps.json.data, {
          id: "notes",
          name: "Notes",
          pages: true,
          embedUrl: `${s.notesUrl}/embed?view=board`,
          appUrl: null
        })
        const embed = yield* ada.get("/api/v1/workspace/apps/notes/embed")
        assert.strictEqual(embed.status, 200, embed.text)
        const url = new URL(embed.json.data.url)
        assert.strictEqual(url.searchParams.get("view"), "board")
        assert.isNotNull(url.searchParams.get("wt"))

        // The service takes wt out of the address at once and keeps a sealed session instead.
        const exchanged = yield* request(url.href, { redirect: "manual" })
        assert.strictEqual(exchanged.status, 303)
        assert.strictEqual(exchanged.headers.get("location"), "/embed?view=board")
        assert.strictEqual(exchanged.headers.get("referrer-policy"), "no-referrer")
        const setCookie = exchanged.headers.get("set-cookie") ?? ""
        assert.match(setCookie, /^notes_embed=v1\./)
        assert.match(setCookie, /HttpOnly/)
        assert.match(setCookie, /SameSite=Lax/)
        assert.match(setCookie, /Max-Age=900/)
        assert.notInclude(setCookie, url.searchParams.get("wt")!)
        const cookie = setCookie.split(";")[0]!
        const opened = yield* request(`${s.notesUrl}/embed?view=board`, { headers: { cookie } })
        assert.strictEqual(opened.status, 200)
        assert.strictEqual(opened.text, "Notes for ada@acme.test in acme")

        const forged = new URL(url.href)
        forged.searchParams.set("wt", `${url.searchParams.get("wt")!.slice(0, -2)}xx`)
        const bad = yield* request(forged.href, { redirect: "manual" })
        assert.strictEqual(bad.status, 401)
        assert.isNull(bad.headers.get("set-cookie"))
        for (const tampered of [
          `${cookie}x`,
          `${cookie.slice(0, -6)}${cookie.endsWith("AAAAAA") ? "BBBBBB" : "AAAAAA"}`
        ]) {
          assert.strictEqual((yield* request(`${s.notesUrl}/embed`, { headers: { cookie: tampered } })).status, 401)
        }
        assert.strictEqual((yield* request(`${s.notesUrl}/embed`)).status, 401)
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "shows a third-party app's pages as the service sent them; a failing service is a user-safe 502",
    () =>
      Effect.gen(function* () {
        const s = yield* stack(backend)
        yield* s.install("notes", true)
        const ada = hub(s.hubUrl, s.ada)
        const pages = yield* ada.get("/api/v1/workspace/apps/notes/pages")
        assert.deepStrictEqual(pages.json.data.pages, [{ id: "hello", title: "Hello", icon: "star", order: 1 }])
        for (const id of ["broken", "garbage"]) {
          const failed = yield* ada.get(`/api/v1/workspace/apps/notes/pages/${id}`)
          assert.strictEqual(failed.status, 502, id)
          assert.strictEqual(code(failed), "UPSTREAM_ERROR")
          assert.notInclude(failed.text, "/srv/notes")
        }
        const gone = yield* ada.get("/api/v1/workspace/apps/notes/pages/nothing")
        assert.strictEqual(gone.status, 404)
        // An id that is a dot segment would take the call out of the pages plane: it never leaves the hub.
        for (const escape of ["%2E%2E", "..%2E"]) {
          const out = yield* ada.get(`/api/v1/workspace/apps/notes/pages/${escape}`)
          assert.strictEqual(out.status, 404, escape)
          assert.strictEqual(code(out), "NOT_FOUND")
        }
      }).pipe(Effect.scoped),
    120_000
  )
})
