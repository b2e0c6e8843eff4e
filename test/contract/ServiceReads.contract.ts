import { assert, describe, it } from "@effect/vitest"
import { Effect, type Layer, type Scope } from "effect"
import { ServiceReads, type ServiceReadTarget } from "../../core/hub/ServiceReads.ts"

/**
 * Makes the adapter over a product that answers `data` (undefined: it does not answer) to the API key and
 * token given, recording each read; answers the adapter, where the product is, and the reads it saw.
 */
export type ProductOver = (
  data: unknown,
  credentials: { readonly apiKey: string; readonly token: string }
) => Effect.Effect<
  {
    readonly reads: Layer.Layer<ServiceReads>
    readonly baseUrl: string
    readonly seen: () => ReadonlyArray<{ readonly path: string; readonly query: Readonly<Record<string, string>> }>
  },
  never,
  Scope.Scope
>

const credentials = { apiKeyHeader: "X-Workspace-Api-Key", apiKey: "hsk_product-api-key", token: "a.b.c" }

const readWith = (
  reads: Layer.Layer<ServiceReads>,
  target: ServiceReadTarget,
  path: "/api/v1/summary" | "/api/v1/search",
  query: Record<string, string>
) =>
  Effect.gen(function* () {
    return yield* (yield* ServiceReads).read(target, path, query)
  }).pipe(Effect.provide(reads))

/** The ServiceReads port's contract (core/hub/ServiceReads.ts), run once per adapter. */
export const ServiceReadsContract = (name: string, over: ProductOver) =>
  describe(`ServiceReads contract (${name})`, () => {
    it.live("answers the data of the product's envelope, for the path and query asked", () =>
      Effect.gen(function* () {
        const data = { sources: 3, names: ["Ünïcode ✓"], nested: { deep: [1, null, true] } }
        const product = yield* over(data, credentials)
        const target = { ...credentials, baseUrl: product.baseUrl }
        assert.deepStrictEqual(yield* readWith(product.reads, target, "/api/v1/summary", {}), data)
        assert.deepStrictEqual(yield* readWith(product.reads, target, "/api/v1/search", { q: "a b&c" }), data)
        assert.deepStrictEqual(product.seen(), [
          { path: "/api/v1/summary", query: {} },
          { path: "/api/v1/search", query: { q: "a b&c" } }
        ])
      })
    )

    it.live("fails with ServiceReadFailed when the product does not answer, or refuses the credentials", () =>
      Effect.gen(function* () {
        const down = yield* over(undefined, credentials)
        const target = { ...credentials, baseUrl: down.baseUrl }
        assert.strictEqual(
          (yield* Effect.flip(readWith(down.reads, target, "/api/v1/summary", {})))._tag,
          "ServiceReadFailed"
        )
        const product = yield* over({ ok: true }, credentials)
        const wrongKey = { ...credentials, baseUrl: product.baseUrl, apiKey: "hsk_another-key" }
        assert.strictEqual(
          (yield* Effect.flip(readWith(product.reads, wrongKey, "/api/v1/summary", {})))._tag,
          "ServiceReadFailed"
        )
      })
    )
  })
