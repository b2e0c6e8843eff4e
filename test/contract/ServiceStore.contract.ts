import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { randomBytes } from "node:crypto"
import { ServiceStore, type StoredService } from "../../core/hub/ServiceStore.ts"

const freshId = () => `svc${randomBytes(8).toString("hex")}`

const stored = (id: string, fields: Partial<StoredService["service"]> = {}): StoredService => ({
  service: {
    id,
    displayName: "Invoices — Ünïcode ✓",
    baseUrl: "https://invoices.example.com",
    status: "draft",
    apiKeyHeader: "X-Workspace-Api-Key",
    resourcePath: "/api/v1/summary",
    firstParty: false,
    createdAt: "2030-01-01T10:00:00.000Z",
    updatedAt: "2030-01-01T10:00:00.000Z",
    version: 1,
    conformance: null,
    ...fields
  },
  credentials: { apiKey: "sealed-api", signingKey: "sealed-signing", embedKey: "sealed-embed" }
})

/** The ServiceStore port's contract (core/hub/ServiceStore.ts), run once per adapter. */
export const ServiceStoreContract = (name: string, services: Layer.Layer<ServiceStore, unknown>) =>
  describe(`ServiceStore contract (${name})`, () =>
    layer(services, { excludeTestServices: true })((it) => {
      it.effect("creates a service once per id and keeps it whole, sealed credentials included", () =>
        Effect.gen(function* () {
          const store = yield* ServiceStore
          const id = freshId()
          const row = stored(id)
          assert.strictEqual(yield* store.create(row), "created")
          assert.strictEqual(yield* store.create(stored(id, { displayName: "Other" })), "taken")
          assert.deepStrictEqual(yield* store.find(id), row)
          assert.isUndefined(yield* store.find(freshId()))
        })
      )

      it.effect("lists services by id, without credentials", () =>
        Effect.gen(function* () {
          const store = yield* ServiceStore
          const ids = [freshId(), freshId(), freshId()]
          for (const id of ids) yield* store.create(stored(id))
          const listed = (yield* store.list()).filter((s) => ids.includes(s.id))
          assert.deepStrictEqual(
            listed,
            [...ids].sort().map((id) => stored(id).service)
          )
          assert.isFalse(listed.some((s) => "credentials" in s))
        })
      )

      it.effect("saves when the stored version is the expected one, with a conformance report", () =>
        Effect.gen(function* () {
          const store = yield* ServiceStore
          const id = freshId()
          yield* store.create(stored(id))
          const next: StoredService = {
            service: {
              ...stored(id).service,
              status: "live",
              version: 2,
              updatedAt: "2030-01-02T00:00:00.000Z",
              conformance: {
                ranAt: "2030-01-02T00:00:00.000Z",
                passed: true,
                checks: [
                  { name: "health", passed: true },
                  { name: "wrong key answers 401", passed: false, detail: "answered 200" }
                ]
              }
            },
            credentials: { apiKey: "sealed-api-2", signingKey: "sealed-signing", embedKey: "sealed-embed-2" }
          }
          assert.isTrue(yield* store.save(next, 1))
          assert.deepStrictEqual(yield* store.find(id), next)
        })
      )

      it.effect("refuses a save against a stale version and keeps the stored row", () =>
        Effect.gen(function* () {
          const store = yield* ServiceStore
          const id = freshId()
          yield* store.create(stored(id))
          assert.isTrue(yield* store.save(stored(id, { version: 2, status: "suspended" }), 1))
          // A second writer that read version 1 loses.
          assert.isFalse(yield* store.save(stored(id, { version: 2, status: "live" }), 1))
          assert.strictEqual((yield* store.find(id))?.service.status, "suspended")
          assert.isFalse(yield* store.save(stored(freshId(), { version: 2 }), 1))
        })
      )

      it.effect("lets exactly one of two concurrent saves from one version win", () =>
        Effect.gen(function* () {
          const store = yield* ServiceStore
          const id = freshId()
          yield* store.create(stored(id))
          const results = yield* Effect.all(
            [
              store.save(stored(id, { version: 2, displayName: "A" }), 1),
              store.save(stored(id, { version: 2, displayName: "B" }), 1)
            ],
            { concurrency: "unbounded" }
          )
          assert.deepStrictEqual([...results].sort(), [false, true])
          const winner = results[0] ? "A" : "B"
          assert.strictEqual((yield* store.find(id))?.service.displayName, winner)
        })
      )
    }))
