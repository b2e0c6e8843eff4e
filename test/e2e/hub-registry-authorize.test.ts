import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Layer, Logger, type Scope } from "effect"
import { TestClock } from "effect/testing"
import { RegistryAuthorizeApi } from "../../adapters/http/hub/RegistryApi.ts"
import { RegistryAuthorizeHandlers } from "../../adapters/http/hub/RegistryHandlers.ts"
import { serviceRoutes } from "../../adapters/http/ServiceHttp.ts"
import { DirectoryMemory } from "../../adapters/memory/hub/DirectoryMemory.ts"
import { ServiceStoreMemory } from "../../adapters/memory/hub/ServiceStoreMemory.ts"
import { mint } from "../../core/auth/IdentityToken.ts"
import { Directory, type Installation, type Organization } from "../../core/hub/Directory.ts"
import { Registry } from "../../core/hub/Registry.ts"
import { ServiceStore } from "../../core/hub/ServiceStore.ts"
import { request, serveForTest, type Answer } from "../support/Http.ts"

const issuer = "platform-hub"
const nowMs = Date.UTC(2026, 2, 1, 9, 0, 0)
const now = nowMs / 1000
const at = new Date(nowMs - 86_400_000).toISOString()
const iso = (seconds: number) => new Date(seconds * 1000).toISOString()

/** The last uninstall or re-consent of the app in Acme, a minute ago. */
const epoch = now - 60

const acme: Organization = {
  id: "org-acme",
  name: "Acme",
  tier: "hourly",
  createdAt: at,
  archivedAt: null,
  mergedIntoOrgId: null,
  deletedAt: null
}

const installation: Installation = {
  orgId: "org-acme",
  serviceId: "shopapp",
  active: true,
  epoch,
  consents: { companyId: true, accessClaims: true, embed: false },
  permissions: ["shopapp.order.read", "shopapp.order.write", "shopapp.store.manage", "tasks.task.read", "other.x.read"],
  updatedAt: at
}

const registryLayer = Registry.layer({ secretsKey: "hub-secrets-key-for-tests", allowLoopbackHttp: true })
const data = Layer.mergeAll(DirectoryMemory, registryLayer.pipe(Layer.provide(ServiceStoreMemory)))

/** Registers, certifies and promotes `shopapp`; Ada (MEMBER of Acme) has it installed. Answers its keys. */
const seed = Effect.gen(function* () {
  yield* TestClock.setTime(nowMs)
  const directory = yield* Directory
  const registry = yield* Registry
  yield* directory.createOrg(acme)
  yield* directory.createOrg({ ...acme, id: "org-other", name: "Other" })
  yield* directory.createUser({ id: "u-ada", email: "ada@acme.test", name: "Ada", verified: true, createdAt: at })
  yield* directory.addMember({
    orgId: "org-acme",
    userId: "u-ada",
    role: "MEMBER",
    department: { id: "d-ops", slug: "ops", name: "Ops" },
    departmentRole: null,
    departments: ["ops", "sales"],
    roles: ["buyer"],
    createdAt: at
  })
  yield* directory.saveInstallation(installation)
  yield* directory.setFlag({ name: "developer-platform", orgId: null, enabled: true })
  yield* directory.setFlag({ name: "access-claims", orgId: null, enabled: true })
  const { credentials } = yield* registry.register({
    id: "shopapp",
    displayName: "Shop",
    baseUrl: "https://shop.example"
  })
  yield* registry.recordConformance("shopapp", { ranAt: at, passed: true, checks: [] })
  yield* registry.promote("shopapp")
  // A second app, registered and never promoted.
  const draft = yield* registry.register({ id: "draftapp", displayName: "Draft", baseUrl: "https://draft.example" })
  yield* directory.saveInstallation({ ...installation, serviceId: "draftapp", permissions: [] })
  return { shop: credentials, draft: draft.credentials }
})

const serve = (requestsPerMinute = 1000) =>
  Effect.gen(function* () {
    const context = yield* Effect.context<Directory | Registry>()
    return yield* serveForTest(
      serviceRoutes({
        api: RegistryAuthorizeApi,
        handlers: RegistryAuthorizeHandlers({ issuer, requestsPerMinute }),
        errors: { dialect: "hub", maxBodyBytes: 64 * 1024 }
      }).pipe(Layer.provide(Layer.succeedContext(context)))
    )
  })

const token = (
  key: string,
  options: { issuedAt?: number; audience?: string; companyId?: string | undefined; email?: string } = {}
) =>
  mint({
    key,
    issuer,
    audience: options.audience ?? "shopapp",
    subject: options.email ?? "ada@acme.test",
    companyId: "companyId" in options ? options.companyId : "org-acme",
    nowSeconds: options.issuedAt ?? now - 10
  })

const post = (baseUrl: string, apiKey: string | undefined, body: string, slug = "shopapp") =>
  request(`${baseUrl}/api/v1/registry/${slug}/authorize`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(apiKey === undefined ? {} : { "x-workspace-api-key": apiKey }) },
    body
  })

const authorizeWith = (baseUrl: string, apiKey: string, tokenValue: string, slug = "shopapp") =>
  post(baseUrl, apiKey, JSON.stringify({ token: tokenValue }), slug)

/** Every answer of the route, whatever it is, carries `Cache-Control: no-store`. */
const expect = (answer: Answer, status: number, code?: string) => {
  assert.strictEqual(answer.status, status, answer.text)
  assert.strictEqual(answer.headers.get("cache-control"), "no-store")
  if (code !== undefined) assert.strictEqual(answer.json.error.code, code)
}

const run = <A, E>(
  effect: (keys: Effect.Success<typeof seed>) => Effect.Effect<A, E, Directory | Registry | Scope.Scope>
) => Effect.provide(Effect.flatMap(seed, effect), data)

describe("POST /api/v1/registry/{slug}/authorize", () => {
  it.effect("answers a current member's authorization, exactly, and never for longer than the token", () =>
    run(({ shop }) =>
      Effect.gen(function* () {
        const { baseUrl } = yield* serve()
        const answer = yield* authorizeWith(baseUrl, shop.apiKey, yield* token(shop.embedKey))
        expect(answer, 200)
        assert.deepStrictEqual(answer.json, {
          data: {
            active: true,
            subject: { email: "ada@acme.test", companyId: "org-acme" },
            access: {
              orgRole: "MEMBER",
              deptSlugs: ["ops", "sales"],
              roleSlugs: ["buyer"],
              // Consented keys of this app only, and only those a member holds (not `manage`).
              permissions: ["shopapp.order.read", "shopapp.order.write"]
            },
            expiresAt: iso(now - 10 + 300),
            asOf: iso(now)
          }
        })
      })
    )
  )

  it.effect("refuses a wrong, missing or another app's API key, and an unknown slug, with the same 401", () =>
    run(({ shop, draft }) =>
      Effect.gen(function* () {
        const { baseUrl } = yield* serve()
        const good = yield* token(shop.embedKey)
        const body = JSON.stringify({ token: good })
        const answers = [
          yield* post(baseUrl, "hsk_not-the-key", body),
          yield* post(baseUrl, undefined, body),
          yield* post(baseUrl, "", body),
          yield* post(baseUrl, draft.apiKey, body),
          yield* post(baseUrl, shop.apiKey, body, "unknownapp"),
          // The right key with a token the app's key did not sign: the same answer too.
          yield* post(baseUrl, shop.apiKey, JSON.stringify({ token: yield* token(draft.embedKey) }))
        ]
        const headersOf = (answer: Answer) => [...answer.headers].filter(([name]) => name !== "date")
        for (const answer of answers) {
          expect(answer, 401, "UNAUTHORIZED")
          assert.strictEqual(answer.text, answers[0]!.text)
          assert.deepStrictEqual(headersOf(answer), headersOf(answers[0]!))
        }
      })
    )
  )

  it.effect("refuses a token for another audience, signed with another key, or expired, with 401", () =>
    run(({ shop, draft }) =>
      Effect.gen(function* () {
        const { baseUrl } = yield* serve()
        const refused = [
          yield* token(shop.embedKey, { audience: "draftapp" }),
          yield* token(draft.embedKey),
          yield* token(shop.embedKey, { issuedAt: now - 300 }),
          "not.a.token"
        ]
        for (const value of refused) expect(yield* authorizeWith(baseUrl, shop.apiKey, value), 401, "UNAUTHORIZED")
      })
    )
  )

  it.effect("answers 404 when the developer platform is off, and only to an app that proved its credentials", () =>
    run(({ shop }) =>
      Effect.gen(function* () {
        const directory = yield* Directory
        yield* directory.setFlag({ name: "developer-platform", orgId: "org-acme", enabled: false })
        const { baseUrl } = yield* serve()
        const good = yield* token(shop.embedKey)
        expect(yield* authorizeWith(baseUrl, shop.apiKey, good), 404, "NOT_FOUND")
        expect(yield* authorizeWith(baseUrl, "hsk_wrong", good), 401, "UNAUTHORIZED")
      })
    )
  )

  it.effect("refuses with 403 a user who is not a current member, or a token without an organization", () =>
    run(({ shop }) =>
      Effect.gen(function* () {
        const directory = yield* Directory
        const { baseUrl } = yield* serve()
        const cases = [
          yield* token(shop.embedKey, { companyId: "org-other" }),
          yield* token(shop.embedKey, { companyId: undefined }),
          yield* token(shop.embedKey, { email: "stranger@acme.test" })
        ]
        for (const value of cases) expect(yield* authorizeWith(baseUrl, shop.apiKey, value), 403, "FORBIDDEN")
        // Removed since the token was minted: refused at once.
        const minted = yield* token(shop.embedKey)
        expect(yield* authorizeWith(baseUrl, shop.apiKey, minted), 200)
        yield* directory.removeMember("org-acme", "u-ada")
        expect(yield* authorizeWith(baseUrl, shop.apiKey, minted), 403, "FORBIDDEN")
      })
    )
  )

  it.effect("refuses an unverified user (a demo identity) exactly as a non-member, until verified", () =>
    run(({ shop }) =>
      Effect.gen(function* () {
        const directory = yield* Directory
        const { baseUrl } = yield* serve()
        const minted = yield* token(shop.embedKey)
        const ada = (yield* directory.findUserById("u-ada"))!
        yield* directory.updateUser({ ...ada, verified: false })
        const unverified = yield* authorizeWith(baseUrl, shop.apiKey, minted)
        expect(unverified, 403, "FORBIDDEN")
        const stranger = yield* authorizeWith(
          baseUrl,
          shop.apiKey,
          yield* token(shop.embedKey, { email: "x@acme.test" })
        )
        assert.strictEqual(unverified.text, stranger.text)
        yield* directory.updateUser(ada)
        expect(yield* authorizeWith(baseUrl, shop.apiKey, minted), 200)
      })
    )
  )

  it.effect("refuses with 403 when the organization is archived, merged or deleted", () =>
    run(({ shop }) =>
      Effect.gen(function* () {
        const directory = yield* Directory
        const { baseUrl } = yield* serve()
        const minted = yield* token(shop.embedKey)
        for (const status of [{ archivedAt: at }, { mergedIntoOrgId: "org-other" }, { deletedAt: at }]) {
          yield* directory.updateOrg({ ...acme, ...status })
          expect(yield* authorizeWith(baseUrl, shop.apiKey, minted), 403, "FORBIDDEN")
        }
        yield* directory.updateOrg(acme)
        expect(yield* authorizeWith(baseUrl, shop.apiKey, minted), 200)
      })
    )
  )

  it.effect("refuses with 403 when the app is uninstalled or not installed", () =>
    run(({ shop }) =>
      Effect.gen(function* () {
        const directory = yield* Directory
        const { baseUrl } = yield* serve()
        const minted = yield* token(shop.embedKey)
        yield* directory.saveInstallation({ ...installation, active: false })
        expect(yield* authorizeWith(baseUrl, shop.apiKey, minted), 403, "FORBIDDEN")
        yield* directory.createUser({ id: "u-bo", email: "bo@other.test", name: null, verified: true, createdAt: at })
        yield* directory.addMember({
          orgId: "org-other",
          userId: "u-bo",
          role: "OWNER",
          department: null,
          departmentRole: null,
          departments: [],
          roles: [],
          createdAt: at
        })
        const other = yield* token(shop.embedKey, { email: "bo@other.test", companyId: "org-other" })
        expect(yield* authorizeWith(baseUrl, shop.apiKey, other), 403, "FORBIDDEN")
      })
    )
  )

  it.effect("refuses a token minted at or before the installation epoch, the same second included", () =>
    run(({ shop }) =>
      Effect.gen(function* () {
        const { baseUrl } = yield* serve()
        for (const issuedAt of [epoch - 1, epoch]) {
          const answer = yield* authorizeWith(baseUrl, shop.apiKey, yield* token(shop.embedKey, { issuedAt }))
          expect(answer, 403, "FORBIDDEN")
        }
        const fresh = yield* authorizeWith(baseUrl, shop.apiKey, yield* token(shop.embedKey, { issuedAt: epoch + 1 }))
        expect(fresh, 200)
        assert.strictEqual(fresh.json.data.expiresAt, iso(epoch + 1 + 300))
      })
    )
  )

  it.effect("a re-consent moves the epoch: a token of that very second is refused, one a second later accepted", () =>
    run(({ shop }) =>
      Effect.gen(function* () {
        const directory = yield* Directory
        const { baseUrl } = yield* serve()
        const sameSecond = yield* token(shop.embedKey, { issuedAt: now })
        expect(yield* authorizeWith(baseUrl, shop.apiKey, sameSecond), 200)
        yield* directory.saveInstallation({ ...installation, epoch: now })
        expect(yield* authorizeWith(baseUrl, shop.apiKey, sameSecond), 403, "FORBIDDEN")
        yield* TestClock.adjust("1 second")
        const next = yield* token(shop.embedKey, { issuedAt: now + 1 })
        expect(yield* authorizeWith(baseUrl, shop.apiKey, next), 200)
      })
    )
  )

  it.effect("refuses with 403 a missing consent or the access-claims rollout turned off", () =>
    run(({ shop }) =>
      Effect.gen(function* () {
        const directory = yield* Directory
        const { baseUrl } = yield* serve()
        const minted = yield* token(shop.embedKey)
        for (const consents of [
          { companyId: false, accessClaims: true, embed: true },
          { companyId: true, accessClaims: false, embed: true }
        ]) {
          yield* directory.saveInstallation({ ...installation, consents })
          expect(yield* authorizeWith(baseUrl, shop.apiKey, minted), 403, "FORBIDDEN")
        }
        yield* directory.saveInstallation(installation)
        yield* directory.setFlag({ name: "access-claims", orgId: "org-acme", enabled: false })
        expect(yield* authorizeWith(baseUrl, shop.apiKey, minted), 403, "FORBIDDEN")
      })
    )
  )

  it.effect("refuses with 403 an app that is draft, suspended, or without a passing conformance report", () =>
    run(({ shop, draft }) =>
      Effect.gen(function* () {
        const registry = yield* Registry
        const { baseUrl } = yield* serve()
        const draftToken = yield* token(draft.embedKey, { audience: "draftapp" })
        expect(yield* authorizeWith(baseUrl, draft.apiKey, draftToken, "draftapp"), 403, "FORBIDDEN")
        const minted = yield* token(shop.embedKey)
        yield* registry.recordConformance("shopapp", {
          ranAt: at,
          passed: false,
          checks: [{ name: "health", passed: false }]
        })
        expect(yield* authorizeWith(baseUrl, shop.apiKey, minted), 403, "FORBIDDEN")
        yield* registry.recordConformance("shopapp", { ranAt: at, passed: true, checks: [] })
        expect(yield* authorizeWith(baseUrl, shop.apiKey, minted), 200)
        yield* registry.suspend("shopapp")
        expect(yield* authorizeWith(baseUrl, shop.apiKey, minted), 403, "FORBIDDEN")
      })
    )
  )

  it.effect("answers 400 VALIDATION_ERROR to a bad slug, body shape or size, and never echoes the token", () =>
    run(({ shop }) =>
      Effect.gen(function* () {
        const { baseUrl } = yield* serve()
        const minted = yield* token(shop.embedKey)
        const secretish = `x${"s".repeat(4096)}`
        const cases = [
          yield* post(baseUrl, shop.apiKey, JSON.stringify({ token: minted, email: "boss@acme.test" })),
          yield* post(baseUrl, shop.apiKey, JSON.stringify({ token: secretish })),
          yield* post(baseUrl, shop.apiKey, JSON.stringify({ token: "" })),
          yield* post(baseUrl, shop.apiKey, JSON.stringify({})),
          yield* post(baseUrl, shop.apiKey, JSON.stringify({ token: minted }), "Shop-App"),
          // Well-formed but over 8 KiB: refused for its size alone.
          yield* post(baseUrl, shop.apiKey, `{"token": "${minted}"${" ".repeat(8 * 1024)}}`)
        ]
        for (const answer of cases) {
          expect(answer, 400, "VALIDATION_ERROR")
          assert.notInclude(answer.text, "sss")
          assert.notInclude(answer.text, minted)
        }
        assert.strictEqual(cases[5]!.json.error.message, "The request body must be at most 8192 bytes.")
        // Not JSON, or not declared JSON: the same VALIDATION_ERROR.
        for (const answer of [
          yield* post(baseUrl, shop.apiKey, "{not json"),
          yield* request(`${baseUrl}/api/v1/registry/shopapp/authorize`, {
            method: "POST",
            headers: { "content-type": "text/plain", "x-workspace-api-key": shop.apiKey },
            body: JSON.stringify({ token: minted })
          })
        ]) {
          expect(answer, 400, "VALIDATION_ERROR")
          assert.strictEqual(answer.json.error.message, "The request body must be a JSON object.")
        }
        // A body of exactly 8 KiB is read and answered.
        const head = `{"token": "${minted}"`
        const exact = `${head}${" ".repeat(8 * 1024 - head.length - 1)}}`
        assert.strictEqual(Buffer.byteLength(exact), 8 * 1024)
        expect(yield* post(baseUrl, shop.apiKey, exact), 200)
        // Any other method on the path is refused, and not cached either.
        expect(yield* request(`${baseUrl}/api/v1/registry/shopapp/authorize`), 404, "NOT_FOUND")
        // So is a path of another shape under the route.
        for (const path of ["shopapp/authorize/extra", "shopapp", "", "x/y/authorize"]) {
          const answer = yield* request(`${baseUrl}/api/v1/registry/${path}`, {
            method: "POST",
            headers: { "content-type": "application/json", "x-workspace-api-key": shop.apiKey },
            body: JSON.stringify({ token: minted })
          })
          expect(answer, 404, "NOT_FOUND")
        }
      })
    )
  )

  it.effect("answers 429 with Retry-After past an app's quota; wrong keys spend none of it", () =>
    run(({ shop }) =>
      Effect.gen(function* () {
        const { baseUrl } = yield* serve(2)
        const minted = yield* token(shop.embedKey)
        for (let i = 0; i < 3; i++) expect(yield* authorizeWith(baseUrl, "hsk_wrong", minted), 401)
        for (let i = 0; i < 2; i++) expect(yield* authorizeWith(baseUrl, shop.apiKey, minted), 200)
        const limited = yield* authorizeWith(baseUrl, shop.apiKey, minted)
        expect(limited, 429, "RATE_LIMITED")
        assert.strictEqual(limited.headers.get("retry-after"), "60")
      })
    )
  )

  describe("when a dependency fails", () => {
    const lines: Array<string> = []
    const capture = Logger.layer([
      Logger.make((options) => {
        lines.push(`${String(options.message)} ${Cause.pretty(options.cause)}`)
      })
    ])
    const dying = <S>(): S => new Proxy({}, { get: () => () => Effect.die(new Error("the store is down")) }) as S

    it.effect("answers 503 UNAVAILABLE, never a grant, when the directory dies, and logs no token", () =>
      run(({ shop }) =>
        Effect.gen(function* () {
          const minted = yield* token(shop.embedKey)
          const { baseUrl } = yield* Effect.provideService(serve(), Directory, dying<Directory["Service"]>())
          const answer = yield* authorizeWith(baseUrl, shop.apiKey, minted)
          expect(answer, 503, "UNAVAILABLE")
          assert.notInclude(answer.text, "down")
          assert.isAbove(lines.length, 0)
          for (const line of lines) assert.notInclude(line, minted)
        })
      ).pipe(Effect.provide(capture))
    )

    it.effect("answers 503 UNAVAILABLE when the registry's storage dies", () =>
      run(({ shop }) =>
        Effect.gen(function* () {
          const minted = yield* token(shop.embedKey)
          const broken = yield* Effect.provide(
            Effect.gen(function* () {
              return yield* Registry
            }),
            // A layer of its own: the shared `registryLayer` would be memoized with the healthy store.
            Registry.layer({ secretsKey: "hub-secrets-key-for-tests", allowLoopbackHttp: true }).pipe(
              Layer.provide(Layer.succeed(ServiceStore)(dying<ServiceStore["Service"]>()))
            )
          )
          const { baseUrl } = yield* Effect.provideService(serve(), Registry, broken)
          expect(yield* authorizeWith(baseUrl, shop.apiKey, minted), 503, "UNAVAILABLE")
        })
      )
    )
  })
})
