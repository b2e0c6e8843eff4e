import { assert, describe, layer } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { randomUUID } from "node:crypto"
import { makeBatchedTakes } from "../../adapters/http/BatchedTakes.ts"
import { RateLimitsFromStore } from "../../adapters/http/RateLimits.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { rateLimitMigrations } from "../../adapters/sql/ratelimits/migrations.ts"
import { RateLimiterStoreSql } from "../../adapters/sql/ratelimits/RateLimiterStoreSql.ts"
import { RateLimits, type RateBudget } from "../../core/kernel/RateLimit.ts"
import { sqlBackends } from "../support/Databases.ts"

/**
 * A client's concurrent requests taken from its budget in one step: the count stays exact (exactly `limit`
 * pass, in one window, whatever the concurrency), and the store is asked once per group, not per request.
 */

/** RateLimits that counts the takes that reach it, and how many requests each carried. */
const counted = Effect.gen(function* () {
  const limits = yield* RateLimits
  const takes: Array<number> = []
  const wrapped = RateLimits.of({
    take: (budget, client, requests = 1) => {
      takes.push(requests)
      return limits.take(budget, client, requests)
    }
  })
  return { wrapped, takes }
})

const budgetOf = (limit: number): RateBudget => ({
  name: `test.${randomUUID()}`,
  limit,
  windowMillis: 60_000,
  whenStoreFails: "local"
})

const stores = [
  { name: "memory", layer: RateLimitsFromStore.pipe(Layer.provide(RateLimiter.layerStoreMemory)) },
  ...sqlBackends.map((backend) => ({
    name: backend.name,
    layer: RateLimitsFromStore.pipe(
      Layer.provide(RateLimiterStoreSql),
      Layer.provide(migrationsLayer("rate_limits", rateLimitMigrations)),
      Layer.provide(backend.layer)
    )
  }))
]

for (const store of stores) {
  layer(store.layer, { timeout: "60 seconds" })(`batched takes (${store.name})`, (it) => {
    describe("makeBatchedTakes", () => {
      it.effect("concurrent requests within the budget all pass, in fewer takes than requests", () =>
        Effect.scoped(
          Effect.gen(function* () {
            const { wrapped, takes } = yield* counted
            const take = yield* makeBatchedTakes(budgetOf(1000)).pipe(Effect.provideService(RateLimits, wrapped))
            const exits = yield* Effect.forEach(Array.from({ length: 60 }), () => Effect.exit(take("acme")), {
              concurrency: "unbounded"
            })
            assert.isTrue(exits.every(Exit.isSuccess))
            assert.strictEqual(
              takes.reduce((a, b) => a + b, 0),
              60
            )
            assert.isBelow(takes.length, 60, "requests that arrive together are taken together")
          })
        )
      )

      it.effect("exactly the budget passes: a refused group is taken again one request at a time", () =>
        Effect.scoped(
          Effect.gen(function* () {
            const { wrapped, takes } = yield* counted
            const take = yield* makeBatchedTakes(budgetOf(25)).pipe(Effect.provideService(RateLimits, wrapped))
            const exits = yield* Effect.forEach(Array.from({ length: 60 }), () => Effect.exit(take("acme")), {
              concurrency: "unbounded"
            })
            assert.strictEqual(exits.filter(Exit.isSuccess).length, 25)
            const refused = exits.filter(Exit.isFailure)
            assert.strictEqual(refused.length, 35)
            for (const exit of refused) {
              assert.isTrue(
                exit.cause.reasons.some((r) => r._tag === "Fail" && r.error._tag === "RateLimited"),
                "a refusal is RateLimited"
              )
            }
            assert.isTrue(
              takes.some((n) => n > 1),
              "some requests were taken together"
            )
            // Another client's budget is its own.
            assert.isTrue(Exit.isSuccess(yield* Effect.exit(take("other"))))
          })
        )
      )
    })
  })
}
