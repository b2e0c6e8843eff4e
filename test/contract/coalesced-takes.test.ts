import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Exit, Layer } from "effect"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { randomUUID } from "node:crypto"
import { RateLimitsFromStore } from "../../adapters/http/RateLimits.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { rateLimitMigrations } from "../../adapters/sql/ratelimits/migrations.ts"
import { RateLimiterStoreSql } from "../../adapters/sql/ratelimits/RateLimiterStoreSql.ts"
import { RateLimits, type RateBudget } from "../../core/kernel/RateLimit.ts"
import { sqlBackends } from "../support/Databases.ts"

/**
 * A client's concurrent requests share the store's calls over the real stores: the count stays exact
 * (exactly `limit` pass in one window, whatever the concurrency), and the store is asked fewer times than
 * there are requests.
 */

/** The tokens of every fixed-window call that reaches the store. */
class StoreCalls extends Context.Service<StoreCalls, Array<number>>()("test/StoreCalls") {}

/** The store given, with its fixed-window calls noted in StoreCalls. */
const counting = <E, R>(store: Layer.Layer<RateLimiter.RateLimiterStore, E, R>) =>
  Layer.effectContext(
    Effect.gen(function* () {
      const inner = yield* RateLimiter.RateLimiterStore
      const calls: Array<number> = []
      const wrapped = RateLimiter.RateLimiterStore.of({
        ...inner,
        fixedWindow: (options) => {
          calls.push(options.tokens)
          return inner.fixedWindow(options)
        }
      })
      return Context.make(RateLimiter.RateLimiterStore, wrapped).pipe(Context.add(StoreCalls, calls))
    })
  ).pipe(Layer.provide(store))

const budgetOf = (limit: number): RateBudget => ({
  name: `test.${randomUUID()}`,
  limit,
  windowMillis: 60_000,
  whenStoreFails: "local"
})

const stores = [
  { name: "memory", store: RateLimiter.layerStoreMemory },
  ...sqlBackends.map((backend) => ({
    name: backend.name,
    store: RateLimiterStoreSql.pipe(
      Layer.provide(migrationsLayer("rate_limits", rateLimitMigrations)),
      Layer.provide(backend.layer)
    )
  }))
]

const sixtyAtOnce = (budget: RateBudget, client: string) =>
  Effect.flatMap(Effect.service(RateLimits), (limits) =>
    Effect.forEach(Array.from({ length: 60 }), () => Effect.exit(limits.take(budget, client)), {
      concurrency: "unbounded"
    })
  )

for (const { name, store } of stores) {
  const composed = Layer.provideMerge(RateLimitsFromStore, counting(store))
  layer(composed, { timeout: "60 seconds" })(`coalesced takes (${name})`, (it) => {
    describe("RateLimits over a shared store", () => {
      it.effect("concurrent requests within the budget all pass, in fewer store calls than requests", () =>
        Effect.gen(function* () {
          const calls = yield* StoreCalls
          const before = calls.length
          const exits = yield* sixtyAtOnce(budgetOf(1000), "acme")
          assert.isTrue(exits.every(Exit.isSuccess))
          const mine = calls.slice(before)
          assert.strictEqual(
            mine.reduce((a, b) => a + b, 0),
            60
          )
          assert.isBelow(mine.length, 60, "requests that arrive together are taken together")
        })
      )

      it.effect("exactly the budget passes, the rest are RateLimited; another client's budget is its own", () =>
        Effect.gen(function* () {
          const budget = budgetOf(25)
          const exits = yield* sixtyAtOnce(budget, "acme")
          assert.strictEqual(exits.filter(Exit.isSuccess).length, 25)
          const refused = exits.filter(Exit.isFailure)
          assert.strictEqual(refused.length, 35)
          for (const exit of refused) {
            assert.isTrue(
              exit.cause.reasons.some((r) => r._tag === "Fail" && r.error._tag === "RateLimited"),
              "a refusal is RateLimited"
            )
          }
          const limits = yield* RateLimits
          assert.isTrue(Exit.isSuccess(yield* Effect.exit(limits.take(budget, "other"))))
        })
      )
    })
  })
}
