import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer } from "effect"
import * as RateLimiter from "effect/persistence/RateLimiter"
import type { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { RateLimitsFromStore } from "../../adapters/http/RateLimits.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { rateLimitMigrations } from "../../adapters/sql/ratelimits/migrations.ts"
import { RateLimiterStoreSql } from "../../adapters/sql/ratelimits/RateLimiterStoreSql.ts"
import { RateLimits, type RateBudget } from "../../core/kernel/RateLimit.ts"
import { sqlBackends } from "../support/Databases.ts"
import { twoWaysIn } from "../support/TwoInstances.ts"

/**
 * Two instances over one database, each with its own leases (and its own pool on a Postgres server), as a
 * load balancer spreads one client's requests: together they admit no more than the budget, and they reach
 * the store far less often than there are requests.
 */

/** One instance's RateLimits over the SQL store, and the tokens of every fixed-window call it sends. */
const instanceOn = (database: Context.Context<SqlClient.SqlClient>) =>
  Effect.gen(function* () {
    const store = Context.get(
      yield* Layer.build(Layer.fresh(RateLimiterStoreSql)).pipe(Effect.provideContext(database)),
      RateLimiter.RateLimiterStore
    )
    const calls: Array<number> = []
    const counted = RateLimiter.RateLimiterStore.of({
      ...store,
      fixedWindow: (options) => {
        calls.push(options.tokens)
        return store.fixedWindow(options)
      }
    })
    const limits = Context.get(
      yield* Layer.build(
        Layer.fresh(RateLimitsFromStore).pipe(Layer.provide(Layer.succeed(RateLimiter.RateLimiterStore)(counted)))
      ),
      RateLimits
    )
    return { limits, calls }
  })

/** A budget whose window outlasts the test: every request below is in one window. */
const budgetOf = (limit: number, windowMillis = 3_600_000): RateBudget => ({
  name: `test.${randomUUID()}`,
  limit,
  windowMillis,
  // A store slower than a second answers Unavailable: a `local` budget would count here alone.
  whenStoreFails: "refuse"
})

type Instance = Effect.Success<ReturnType<typeof instanceOn>>

/** `waves` rounds of `each` concurrent requests on each instance at once; the outcome of every request. */
const spread = (instances: ReadonlyArray<Instance>, budget: RateBudget, waves: number, each: number) =>
  Effect.gen(function* () {
    const outcomes: Array<"passed" | "RateLimited" | "Unavailable"> = []
    for (let wave = 0; wave < waves; wave++) {
      const exits = yield* Effect.forEach(
        instances.flatMap(({ limits }) => Array.from({ length: each }, () => limits)),
        (limits) => Effect.exit(limits.take(budget, "acme")),
        { concurrency: "unbounded" }
      )
      for (const exit of exits) {
        if (Exit.isSuccess(exit)) outcomes.push("passed")
        else {
          const failure = exit.cause.reasons.find((reason) => reason._tag === "Fail")
          assert.isDefined(failure, "a refusal is a failure, not a defect")
          outcomes.push(failure.error._tag)
        }
      }
    }
    return outcomes
  })

for (const backend of sqlBackends) {
  describe(`leased takes over one database (${backend.name})`, () => {
    it.live(
      "two instances never admit more than the budget, and exactly the budget when both keep receiving requests",
      () =>
        Effect.gen(function* () {
          const { first, second } = yield* twoWaysIn(backend, migrationsLayer("rate_limits", rateLimitMigrations))
          const instances = [yield* instanceOn(first), yield* instanceOn(second)]
          const limit = 300
          const outcomes = yield* spread(instances, budgetOf(limit), 40, 10)
          const passed = outcomes.filter((outcome) => outcome === "passed").length
          assert.isAtMost(passed, limit)
          // A call slower than a second is refused, and its lease may have been counted all the same.
          if (!outcomes.includes("Unavailable")) assert.strictEqual(passed, limit)
          const calls = instances.flatMap((instance) => instance.calls)
          assert.isBelow(calls.length, outcomes.length / 4, `${calls.length} store calls for ${outcomes.length}`)
          assert.isTrue(
            calls.some((tokens) => tokens > 1),
            "calls lease tokens ahead"
          )
        }).pipe(Effect.scoped),
      // The embedded database takes a while to start on a busy machine.
      60_000
    )

    it.live(
      "far from the budget, each instance reaches the store about once in 16 requests",
      () =>
        Effect.gen(function* () {
          const { first, second } = yield* twoWaysIn(backend, migrationsLayer("rate_limits", rateLimitMigrations))
          const instances = [yield* instanceOn(first), yield* instanceOn(second)]
          // Each token counted moves the window's end on by 3.6 s: no lease ends during the test.
          const budget = budgetOf(10_000, 36_000_000)
          const outcomes: Array<boolean> = []
          for (let i = 0; i < 320; i++) {
            const exit = yield* Effect.exit(instances[i % 2]!.limits.take(budget, "acme"))
            outcomes.push(Exit.isSuccess(exit))
          }
          assert.isTrue(outcomes.every((passed) => passed))
          for (const { calls } of instances) {
            // One call of one token before the window is known, then one lease of 16 per 16 requests.
            assert.deepStrictEqual(calls, [1, ...Array.from({ length: 10 }, () => 16)])
          }
        }).pipe(Effect.scoped),
      60_000
    )
  })
}
