import { assert, describe, it } from "@effect/vitest"
import { Clock, Context, Effect, Layer, Result } from "effect"
import { TestClock } from "effect/testing"
import * as fc from "fast-check"
import { RateLimitsMemory } from "../../adapters/http/RateLimits.ts"
import { RateLimits, type RateBudget } from "../../core/kernel/RateLimit.ts"

const budget = (limit: number, windowMillis = 60_000): RateBudget => ({
  name: "test",
  limit,
  windowMillis,
  whenStoreFails: "local"
})

/** Takes from a fresh memory store: undefined when allowed, else the seconds to wait. */
const takeWith = Effect.map(Layer.build(Layer.fresh(RateLimitsMemory)), (context) => {
  const limits = Context.get(context, RateLimits)
  return (rule: RateBudget, client: string) =>
    limits.take(rule, client).pipe(
      Effect.as(undefined),
      Effect.catchTag("RateLimited", (e) => Effect.succeed(e.retryAfterSeconds))
    )
})

describe("RateLimits (fixed window)", () => {
  it.effect("limits each client on its own and answers the seconds until its window closes", () =>
    Effect.gen(function* () {
      const take = yield* takeWith
      const rule = budget(2)
      assert.isUndefined(yield* take(rule, "a"))
      assert.isUndefined(yield* take(rule, "a"))
      assert.strictEqual(yield* take(rule, "a"), 60)
      assert.isUndefined(yield* take(rule, "b"))
      yield* TestClock.adjust("59 seconds")
      assert.strictEqual(yield* take(rule, "a"), 1)
      yield* TestClock.adjust("1 second")
      assert.isUndefined(yield* take(rule, "a"))
    })
  )

  it.effect("two budgets of different names are apart for the same client", () =>
    Effect.gen(function* () {
      const take = yield* takeWith
      assert.isUndefined(yield* take(budget(1), "a"))
      assert.strictEqual(yield* take(budget(1), "a"), 60)
      assert.isUndefined(yield* take({ ...budget(1), name: "other" }, "a"))
    })
  )

  it.effect("a budget of zero refuses every request for a window", () =>
    Effect.gen(function* () {
      const take = yield* takeWith
      assert.strictEqual(yield* take(budget(0), "a"), 60)
    })
  )

  it.effect("a refusal is the RateLimited error of the kernel", () =>
    Effect.gen(function* () {
      const limits = yield* RateLimits
      yield* limits.take(budget(1), "a")
      const refused = yield* Effect.result(limits.take(budget(1), "a"))
      assert.isTrue(Result.isFailure(refused) && refused.failure._tag === "RateLimited")
    }).pipe(Effect.provide(Layer.fresh(RateLimitsMemory)))
  )

  it("a client within its rate is never refused; no window holds more than twice the limit", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.integer({ min: 0, max: 400 }), { maxLength: 80 }),
        (limit, gaps) =>
          Effect.gen(function* () {
            const take = yield* takeWith
            const windowMillis = 1000
            const rule = budget(limit, windowMillis)
            const spacing = Math.ceil(windowMillis / limit)
            const allowedAt: Array<number> = []
            for (const gap of gaps) {
              yield* TestClock.adjust(gap)
              const now = yield* Clock.currentTimeMillis
              const wait = yield* take(rule, "busy")
              if (wait === undefined) allowedAt.push(now)
              else assert.isTrue(wait >= 1 && wait <= windowMillis / 1000)
              // Another client, asking only after at least window / limit: it keeps to its rate.
              if (gap >= spacing) assert.isUndefined(yield* take(rule, "spaced"))
            }
            for (const at of allowedAt) {
              assert.isAtMost(allowedAt.filter((t) => t > at - windowMillis && t <= at).length, 2 * limit)
            }
          }).pipe(Effect.scoped, Effect.provide(TestClock.layer()), Effect.runPromise)
      )
    )
  })
})
