import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted, Schedule } from "effect"
import { HttpApi, HttpApiBuilder } from "effect/http-api"
import { lookup } from "node:dns"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { LookupFunction } from "node:net"
import { HubAdminAuthLayer } from "../../adapters/http/hub/AdminAuth.ts"
import { ConformanceGroup } from "../../adapters/http/hub/ConformanceApi.ts"
import { conformanceHandlers } from "../../adapters/http/hub/ConformanceHandlers.ts"
import { hubErrorResponse } from "../../adapters/http/ErrorResponse.ts"
import { serviceRoutes } from "../../adapters/http/ServiceHttp.ts"
import { ServiceProbeHttp } from "../../adapters/http/ServiceProbeHttp.ts"
import { isPrivateAddress } from "../../core/kernel/Addresses.ts"
import { IdempotencyStoreMemory } from "../../adapters/memory/IdempotencyStoreMemory.ts"
import { ServiceStoreMemory } from "../../adapters/memory/hub/ServiceStoreMemory.ts"
import { FirstParty, firstPartyServices, type FirstPartySettings } from "../../apps/server/hub/FirstParty.ts"
import { tasksRoutes } from "../../apps/server/tasks/TasksRoutes.ts"
import { mint, verify } from "../../core/auth/IdentityToken.ts"
import { Conformance, probeSubject } from "../../core/hub/Conformance.ts"
import { Registry } from "../../core/hub/Registry.ts"
import { ServiceProbe } from "../../core/hub/ServiceProbe.ts"
import type { ConformanceReport } from "../../core/hub/ServiceStore.ts"
import { DecisionsMemory } from "../support/DecisionsMemory.ts"
import { request, serveForTest } from "../support/Http.ts"
import { testDecisionsKeys, testServiceSettings } from "../support/ServiceSettings.ts"
import { tasksMemoryData, tasksStack, webSignInOff } from "../support/TasksStack.ts"
import { alwaysReady, serveDecisions } from "../support/DecisionsServed.ts"

const { issuer } = testDecisionsKeys
const adminKey = "hub-admin-key-for-tests-0123456789"
const keys = {
  decisionsApiKey: testDecisionsKeys.apiKey,
  decisionsEmbedKey: testDecisionsKeys.embedKey,
  tasksApiKey: "tasks-service-key-for-tests"
}

const settings = testServiceSettings({ tasksApiKey: Redacted.make(keys.tasksApiKey) })

/** Every address in tests is a loopback literal, so the plain lookup stands in for the DNS-checked one. */
const plainLookup = () => lookup as LookupFunction

/**
 * The hub's registry and conformance check over memory storage, probing over real HTTP. `production`: the
 * probe refuses loopback, except for the operator-configured first-party services.
 */
const hubWith = (options: { readonly production: boolean }) =>
  Conformance.layer({ issuer }).pipe(
    Layer.provideMerge(Registry.layer({ secretsKey: "hub-secrets-key-for-tests", allowLoopbackHttp: true })),
    Layer.provideMerge(ServiceStoreMemory),
    Layer.provideMerge(
      ServiceProbeHttp({ allowLoopback: !options.production, guardLookup: plainLookup, timeoutMs: 2_000 })
    )
  )
const hub = hubWith({ production: false })
const productionHub = hubWith({ production: true })

/** The real first-party decisions and tasks services, each on its own ephemeral port. */
const serveFirstParty = Effect.gen(function* () {
  const decisions = yield* serveDecisions(Layer.merge(DecisionsMemory, IdempotencyStoreMemory))
  const tasks = yield* serveForTest(
    tasksRoutes(settings, webSignInOff).pipe(Layer.provide(Layer.merge(tasksStack(tasksMemoryData), alwaysReady)))
  )
  const firstParty: FirstPartySettings = {
    decisionsBaseUrl: decisions.baseUrl,
    tasksBaseUrl: tasks.baseUrl,
    decisionsApiKey: settings.decisionsApiKey,
    decisionsEmbedKey: settings.decisionsEmbedKey,
    tasksApiKey: settings.tasksApiKey,
    tasksSigningKey: undefined
  }
  return firstParty
})

const failedChecks = (report: ConformanceReport) => report.checks.filter((c) => !c.passed).map((c) => c.name)

type Flaw = "manifestOpenWithoutKey" | "leaksOnReady" | "acceptsWrongAudience"

/**
 * A small third-party service written against the platform contract with at most one deliberate flaw. Its keys are
 * issued by the registry after it listens, so they are set afterwards.
 */
const testService = (flaw?: Flaw) =>
  Effect.gen(function* () {
    const credentials = { apiKey: "", embedKey: "" }
    const json = (response: ServerResponse, status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json" })
      response.end(JSON.stringify(body))
    }
    const unauthorized = (response: ServerResponse) =>
      json(response, 401, { error: { code: "UNAUTHORIZED", message: "Missing or invalid credentials." } })
    const manifest = { service: "acme", displayName: "Acme", contractVersion: "v1", requiredTier: "free" }
    const handle = async (req: IncomingMessage, response: ServerResponse) => {
      const key = req.headers["x-workspace-api-key"]
      switch (req.url) {
        case "/api/v1/health":
          return json(response, 200, { data: { status: "ok" } })
        case "/api/v1/ready":
          return flaw === "leaksOnReady"
            ? json(response, 500, {
                error: {
                  code: "INTERNAL_ERROR",
                  message: "Error: DATABASE_URL is not set\n    at connect (/srv/acme/db.js:12:7)"
                }
              })
            : json(response, 200, { data: { status: "ready" } })
        case "/api/v1/version":
          return json(response, 200, { data: { service: "acme", contractVersion: "v1", build: "1" } })
        case "/api/v1/manifest":
          if (key === credentials.apiKey || (key === undefined && flaw === "manifestOpenWithoutKey")) {
            return json(response, 200, { data: manifest })
          }
          return unauthorized(response)
        case "/api/v1/summary": {
          if (key !== credentials.apiKey) return unauthorized(response)
          if (flaw === "acceptsWrongAudience") return json(response, 200, { data: {} })
          const token = String(req.headers["x-workspace-token"] ?? "")
          const nowSeconds = Math.floor(Date.now() / 1000)
          const identity = await Effect.runPromise(
            Effect.result(verify({ token, key: credentials.embedKey, issuer, audience: "acme", nowSeconds }))
          )
          return identity._tag === "Success" ? json(response, 200, { data: {} }) : unauthorized(response)
        }
        default:
          return json(response, 404, { error: { code: "NOT_FOUND", message: "Not found." } })
      }
    }
    const server = createServer((req, response) => void handle(req, response))
    yield* Effect.acquireRelease(
      Effect.callback<void>((resume) => {
        server.listen(0, "127.0.0.1", () => resume(Effect.void))
      }),
      () => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
    )
    const address = server.address()
    if (address === null || typeof address === "string") return yield* Effect.die("expected a port")
    const registry = yield* Registry
    const registered = yield* registry.register({
      id: "acme",
      displayName: "Acme",
      baseUrl: `http://127.0.0.1:${address.port}`
    })
    credentials.apiKey = registered.credentials.apiKey
    credentials.embedKey = registered.credentials.embedKey
    return registered.service
  })

describe("conformance of the first-party services", () => {
  it.live("decisions and tasks, served for real beside a production hub and registered from configuration, pass", () =>
    Effect.gen(function* () {
      const firstParty = yield* serveFirstParty
      const registry = yield* Registry
      const conformance = yield* Conformance
      for (const service of firstPartyServices(firstParty)) {
        const registered = yield* registry.registerFirstParty(service)
        assert.strictEqual(registered.status, "draft")
        const report = yield* conformance.run(service.id)
        assert.deepStrictEqual(failedChecks(report), [], JSON.stringify(report.checks))
        assert.isTrue(report.passed)
        assert.deepStrictEqual(yield* conformance.latest(service.id), report)
        assert.strictEqual((yield* registry.promote(service.id)).status, "live")
      }
    }).pipe(Effect.provide(productionHub))
  )

  it.live(
    "decisions refuses the probe's token for its audience alone: the same token for `decisions` is accepted",
    () =>
      Effect.gen(function* () {
        const firstParty = yield* serveFirstParty
        const [decisions] = firstPartyServices(firstParty)
        const token = yield* mint({
          key: keys.decisionsEmbedKey,
          issuer,
          audience: "decisions",
          subject: probeSubject,
          companyId: "conformance",
          nowSeconds: Math.floor(Date.now() / 1000)
        })
        const answer = yield* request(`${decisions!.baseUrl}${decisions!.resourcePath}`, {
          headers: { "X-Decisions-Api-Key": keys.decisionsApiKey, "X-Workspace-Token": token }
        })
        assert.strictEqual(answer.status, 200, answer.text)
      })
  )

  it.live("the bundled server's FirstParty layer registers both, checks them and promotes them", () =>
    Effect.gen(function* () {
      const firstParty = yield* serveFirstParty
      yield* Layer.build(FirstParty({ ...firstParty, attempts: 3, retryDelay: "50 millis" }))
      const registry = yield* Registry
      // The check runs in the background; wait (bounded) until both are live.
      const live = yield* registry.list().pipe(
        Effect.flatMap((services) =>
          services.length === 2 && services.every((s) => s.status === "live")
            ? Effect.succeed(services)
            : Effect.fail("not yet" as const)
        ),
        Effect.retry({ schedule: Schedule.spaced("50 millis"), times: 100 })
      )
      assert.deepStrictEqual(live.map((s) => [s.id, s.firstParty, s.conformance?.passed]).sort(), [
        ["decisions", true, true],
        ["tasks", true, true]
      ])
    }).pipe(Effect.provide(productionHub))
  )

  it.live("a first-party service configured with another key than the hub's is checked, fails and stays draft", () =>
    Effect.gen(function* () {
      const firstParty = yield* serveFirstParty
      // The hub is not given TASKS_API_KEY: the registry issues its own, which the task inbox refuses.
      yield* Layer.build(FirstParty({ ...firstParty, tasksApiKey: undefined, attempts: 2, retryDelay: "50 millis" }))
      const registry = yield* Registry
      const tasks = yield* registry.find("tasks").pipe(
        Effect.flatMap((service) =>
          service.conformance === null ? Effect.fail("not yet" as const) : Effect.succeed(service)
        ),
        Effect.retry({ schedule: Schedule.spaced("50 millis"), times: 100 })
      )
      assert.strictEqual(tasks.status, "draft")
      assert.includeMembers(failedChecks(tasks.conformance!), ["manifest"])
    }).pipe(Effect.provide(productionHub))
  )
})

describe("conformance of a broken service", () => {
  it.live("a well-behaved test service passes (the harness itself is sound)", () =>
    Effect.gen(function* () {
      yield* testService()
      const report = yield* (yield* Conformance).run("acme")
      assert.deepStrictEqual(failedChecks(report), [], JSON.stringify(report.checks))
    }).pipe(Effect.provide(hub))
  )

  const cases: ReadonlyArray<readonly [Flaw, ReadonlyArray<string>]> = [
    ["manifestOpenWithoutKey", ["manifestWithoutKey"]],
    ["leaksOnReady", ["ready", "errorBodies"]],
    ["acceptsWrongAudience", ["wrongAudience"]]
  ]
  for (const [flaw, expected] of cases) {
    it.live(`${flaw}: fails ${expected.join(" and ")}, and promotion is refused with 403`, () =>
      Effect.gen(function* () {
        yield* testService(flaw)
        const report = yield* (yield* Conformance).run("acme")
        assert.isFalse(report.passed)
        assert.deepStrictEqual(failedChecks(report), expected)
        // The report is ours: the leaked text never enters it.
        assert.notInclude(JSON.stringify(report), "DATABASE_URL")
        assert.notInclude(JSON.stringify(report), "/srv/acme")
        const refused = yield* Effect.flip((yield* Registry).promote("acme"))
        assert.strictEqual(refused._tag, "Forbidden")
        assert.strictEqual((yield* hubErrorResponse(refused)).status, 403)
        assert.strictEqual((yield* (yield* Registry).find("acme")).status, "draft")
      }).pipe(Effect.provide(hub))
    )
  }

  it.live("a production hub never probes a developer's service on a loopback address", () =>
    Effect.gen(function* () {
      yield* testService()
      const report = yield* (yield* Conformance).run("acme")
      assert.isFalse(report.passed)
      assert.strictEqual(report.checks[0]!.detail, "the address is not allowed")
    }).pipe(Effect.provide(productionHub))
  )

  it.live("an unreachable service fails every probe without an answer", () =>
    Effect.gen(function* () {
      const registry = yield* Registry
      // A port that was just free: nothing listens there.
      const server = createServer()
      const port = yield* Effect.callback<number>((resume) => {
        server.listen(0, "127.0.0.1", () => {
          const address = server.address()
          server.close(() => resume(Effect.succeed(typeof address === "object" && address ? address.port : 0)))
        })
      })
      yield* registry.register({ id: "gone", displayName: "Gone", baseUrl: `http://127.0.0.1:${port}` })
      const report = yield* (yield* Conformance).run("gone")
      assert.isFalse(report.passed)
      assert.deepStrictEqual(failedChecks(report), [
        "health",
        "ready",
        "version",
        "manifest",
        "manifestWithoutKey",
        "manifestWrongKey",
        "wrongAudience"
      ])
      assert.strictEqual(report.checks[0]!.detail, "the service could not be reached")
    }).pipe(Effect.provide(hub))
  )
})

/** The operator group, served alone through a test API with the hub's error envelope. */
class TestApi extends HttpApi.make("conformanceTest").add(ConformanceGroup) {}

const serveOperator = serveForTest(
  serviceRoutes({
    api: TestApi,
    handlers: HttpApiBuilder.group(TestApi, "conformance", (handlers) =>
      Effect.map(conformanceHandlers, (h) => handlers.handleAll(h))
    ),
    errors: { dialect: "hub", maxBodyBytes: 64 * 1024 }
  }).pipe(Layer.provide(HubAdminAuthLayer({ adminKey: Redacted.make(adminKey) })))
)

const admin = { authorization: `Bearer ${adminKey}` }

describe("operator endpoints: /api/v1/admin/services/{id}/conformance", () => {
  it.live("refuse a missing or wrong admin key with 401", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serveOperator
      const url = `${baseUrl}/api/v1/admin/services/acme/conformance`
      for (const headers of [{}, { authorization: "Bearer wrong" }]) {
        for (const method of ["GET", "POST"]) {
          const answer = yield* request(url, { method, headers })
          assert.strictEqual(answer.status, 401)
          assert.deepStrictEqual(answer.json, {
            error: { code: "UNAUTHORIZED", message: "Missing or invalid credentials." }
          })
        }
      }
    }).pipe(Effect.provide(hub))
  )

  it.live("run answers the report, GET answers the same report, unknown ids are 404", () =>
    Effect.gen(function* () {
      const firstParty = yield* serveFirstParty
      yield* (yield* Registry).registerFirstParty(firstPartyServices(firstParty)[0]!)
      const { baseUrl } = yield* serveOperator
      const url = (id: string) => `${baseUrl}/api/v1/admin/services/${id}/conformance`

      const before = yield* request(url("decisions"), { headers: admin })
      assert.strictEqual(before.status, 404)
      assert.strictEqual(before.json.error.code, "NOT_FOUND")

      const run = yield* request(url("decisions"), { method: "POST", headers: admin })
      assert.strictEqual(run.status, 200, run.text)
      assert.isTrue(run.json.data.passed)
      assert.strictEqual(run.json.data.checks.length, 8)

      const latest = yield* request(url("decisions"), { headers: admin })
      assert.strictEqual(latest.status, 200)
      assert.deepStrictEqual(latest.json, run.json)

      for (const method of ["GET", "POST"]) {
        const unknown = yield* request(url("nosuch"), { method, headers: admin })
        assert.strictEqual(unknown.status, 404)
        assert.deepStrictEqual(unknown.json, { error: { code: "NOT_FOUND", message: "Not found." } })
      }
    }).pipe(Effect.provide(hub))
  )
})

describe("ServiceProbeHttp", () => {
  it("lets a public address through, and an IPv6 one written in any spelling", () => {
    for (const ip of ["8.8.8.8", "2606:4700:4700::1111", "2a00:1450:4001:80b::200e"]) {
      assert.isFalse(isPrivateAddress(ip), ip)
    }
    for (const ip of ["0:0:0:0:0:0:7f00:1", "::ffff:0:a00:1", "64:FF9B::A00:1", "not-an-address", "1::2::3"]) {
      assert.isTrue(isPrivateAddress(ip), ip)
    }
  })

  /** A server answering every request with `handler`, for the life of the scope. */
  const serve = (handler: (response: ServerResponse) => void) =>
    Effect.gen(function* () {
      const server = createServer((_req, response) => handler(response))
      yield* Effect.acquireRelease(
        Effect.callback<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
        () =>
          Effect.callback<void>((resume) => {
            server.closeAllConnections()
            server.close(() => resume(Effect.void))
          })
      )
      const address = server.address()
      return typeof address === "object" && address !== null ? address.port : 0
    })

  const send = (config: Partial<Parameters<typeof ServiceProbeHttp>[0]>, url: string) =>
    Effect.flatMap(ServiceProbe, (probe) => probe.send({ method: "GET", url, headers: {} })).pipe(
      Effect.provide(ServiceProbeHttp({ allowLoopback: true, guardLookup: plainLookup, ...config }))
    )

  it.live("never follows a redirect", () =>
    Effect.gen(function* () {
      const port = yield* serve((response) => {
        response.writeHead(302, { location: "http://169.254.169.254/latest/meta-data" })
        response.end()
      })
      const answer = yield* send({}, `http://127.0.0.1:${port}/api/v1/health`)
      assert.strictEqual(answer.status, 302)
      assert.strictEqual(answer.headers["location"], "http://169.254.169.254/latest/meta-data")
    })
  )

  it.live("reads at most the body cap and says it cut the body", () =>
    Effect.gen(function* () {
      const port = yield* serve((response) => {
        response.writeHead(200)
        response.end("x".repeat(100_000))
      })
      const answer = yield* send({ maxBodyBytes: 1000 }, `http://127.0.0.1:${port}/`)
      assert.strictEqual(answer.body.length, 1000)
      assert.isTrue(answer.truncated)
    })
  )

  it.live("gives up on a service that does not answer", () =>
    Effect.gen(function* () {
      const port = yield* serve(() => undefined)
      const failure = yield* Effect.flip(send({ timeoutMs: 100 }, `http://127.0.0.1:${port}/`))
      assert.strictEqual(failure.reason, "timeout")
    })
  )

  it.live("in production refuses loopback and private addresses, written or resolved", () =>
    Effect.gen(function* () {
      const port = yield* serve((response) => response.end("{}"))
      for (const host of [
        "127.0.0.1",
        "10.0.0.1",
        "[::1]",
        "169.254.169.254",
        "0.0.0.0",
        "[::]",
        "[::ffff:127.0.0.1]",
        "[fd00::1]",
        // IPv4 carried inside IPv6, which a gateway may forward to a private address: IPv4-compatible,
        // NAT64, 6to4, Teredo; deprecated site-local; and IPv4 networks reserved for internal use.
        "[::127.0.0.1]",
        "[64:ff9b::7f00:1]",
        "[2002:7f00:1::]",
        "[2001:0:4136:e378:8000:63bf:3fff:fdd2]",
        "[fec0::1]",
        "192.0.0.1",
        "198.18.0.1"
      ]) {
        const failure = yield* Effect.flip(send({ allowLoopback: false }, `http://${host}:${port}/`))
        assert.strictEqual(failure.reason, "blocked_address", host)
      }
      // A name is checked by the guarded lookup with the adapter's own rule (here: localhost is 127.0.0.1).
      const guardLookup =
        (allowed: (ip: string) => boolean): LookupFunction =>
        (hostname, options, callback) =>
          allowed("127.0.0.1") ? lookup(hostname, options, callback as never) : callback(new Error("blocked"), "", 4)
      const byName = yield* Effect.flip(send({ allowLoopback: false, guardLookup }, `http://localhost:${port}/`))
      assert.strictEqual(byName.reason, "blocked_address")
      const allowed = yield* send({ allowLoopback: true, guardLookup }, `http://localhost:${port}/`)
      assert.strictEqual(allowed.status, 200)
    })
  )
})
