import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { ServiceStoreMemory } from "../../adapters/memory/hub/ServiceStoreMemory.ts"
import { FirstParty, type FirstPartySettings } from "../../apps/server/hub/FirstParty.ts"
import { Conformance } from "../../core/hub/Conformance.ts"
import { Registry } from "../../core/hub/Registry.ts"
import { NotFound } from "../../core/kernel/index.ts"

const settings: FirstPartySettings = {
  decisionsBaseUrl: "http://127.0.0.1:4001",
  tasksBaseUrl: "http://127.0.0.1:4002",
  decisionsApiKey: Redacted.make("decisions-api-key-0123456789"),
  decisionsEmbedKey: Redacted.make("decisions-embed-key-0123456789"),
  tasksApiKey: Redacted.make("tasks-api-key-0123456789"),
  tasksSigningKey: Redacted.make("tasks-signing-key-0123456789"),
  attempts: 1
}

/** The conformance check is not what these tests are about: it cannot run, which is only logged. */
const noConformance = Layer.succeed(Conformance)({
  run: () => Effect.fail(new NotFound({})),
  latest: () => Effect.fail(new NotFound({}))
})

/** One start of the bundled server, as far as first-party registration goes, on the registry it is given. */
const start = (registry: Registry["Service"], configuration: FirstPartySettings) =>
  Effect.scoped(
    Layer.build(
      FirstParty(configuration).pipe(Layer.provide(Layer.merge(Layer.succeed(Registry)(registry), noConformance)))
    )
  )

const registryLayer = Registry.layer({
  secretsKey: "hub-secrets-key-for-tests-0123456789",
  allowLoopbackHttp: true
}).pipe(Layer.provide(ServiceStoreMemory))

describe("first-party registration at start", () => {
  it.effect("a restart on an unchanged configuration writes nothing; a changed key or address is registered", () =>
    Effect.gen(function* () {
      const registry = yield* Registry
      yield* start(registry, settings)
      const first = yield* registry.credentials("decisions")
      assert.strictEqual(first?.credentials.apiKey, "decisions-api-key-0123456789")
      assert.strictEqual((yield* registry.credentials("tasks"))?.credentials.signingKey, "tasks-signing-key-0123456789")

      yield* start(registry, settings)
      const unchanged = yield* registry.credentials("decisions")
      assert.strictEqual(unchanged?.service.version, first?.service.version)
      assert.strictEqual(unchanged?.service.updatedAt, first?.service.updatedAt)

      yield* start(registry, { ...settings, decisionsApiKey: Redacted.make("decisions-api-key-rotated-0123") })
      const rotated = yield* registry.credentials("decisions")
      assert.strictEqual(rotated?.credentials.apiKey, "decisions-api-key-rotated-0123")
      assert.strictEqual(rotated?.credentials.embedKey, "decisions-embed-key-0123456789")
      assert.isAbove(rotated!.service.version, first!.service.version)

      yield* start(registry, { ...settings, tasksBaseUrl: "http://127.0.0.1:5002" })
      assert.strictEqual((yield* registry.find("tasks")).baseUrl, "http://127.0.0.1:5002")
    }).pipe(Effect.provide(registryLayer))
  )

  it.effect("an operator's suspension survives a restart", () =>
    Effect.gen(function* () {
      const registry = yield* Registry
      yield* start(registry, settings)
      yield* registry.suspend("tasks")
      yield* start(registry, settings)
      assert.strictEqual((yield* registry.find("tasks")).status, "suspended")
    }).pipe(Effect.provide(registryLayer))
  )

  it.effect("registers the task inbox with its web app's address, so the workspace can link to it", () =>
    Effect.gen(function* () {
      const registry = yield* Registry
      yield* start(registry, { ...settings, tasksAppUrl: "http://127.0.0.1:4002" })
      const tasks = yield* registry.find("tasks")
      assert.strictEqual(tasks.appUrl, "http://127.0.0.1:4002/")
      assert.isUndefined((yield* registry.find("decisions")).appUrl)

      yield* start(registry, { ...settings, tasksAppUrl: "http://127.0.0.1:4002/" })
      assert.strictEqual((yield* registry.find("tasks")).version, tasks.version, "the same address writes nothing")
      yield* start(registry, { ...settings, tasksAppUrl: "https://tasks.example.com" })
      assert.strictEqual((yield* registry.find("tasks")).appUrl, "https://tasks.example.com/")
    }).pipe(Effect.provide(registryLayer))
  )

  it.effect("a registration's appUrl is an https address (loopback http outside production), never a script", () =>
    Effect.gen(function* () {
      const registry = yield* Registry
      const base = { displayName: "Notes", baseUrl: "https://notes.example" }
      for (const appUrl of ["javascript:alert(1)", "http://notes.example/", "https://user:pw@notes.example/", "//x"]) {
        const refused = yield* Effect.flip(registry.register({ ...base, id: "notes", appUrl }))
        assert.strictEqual(refused._tag, "ValidationError", appUrl)
        assert.match(refused.message, /^appUrl /, appUrl)
      }
      const { service } = yield* registry.register({ ...base, id: "notes", appUrl: "https://notes.example/app?x=1" })
      assert.strictEqual(service.appUrl, "https://notes.example/app?x=1")
      assert.strictEqual((yield* registry.find("notes")).appUrl, "https://notes.example/app?x=1")
    }).pipe(Effect.provide(registryLayer))
  )
})
