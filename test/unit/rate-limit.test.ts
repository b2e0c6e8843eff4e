import { keepsToRates } from "../support/RatePacing.ts"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Fiber, Layer, Logger, Result } from "effect"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { TestClock } from "effect/testing"
import * as fc from "fast-check"
import { RateLimitsFromStore, RateLimitsMemory } from "../../adapters/http/RateLimits.ts"
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
          Effect.flatMap(takeWith, (take) => keepsToRates(take, budget(limit, 1000), gaps)).pipe(
            Effect.scoped,
            Effect.provide(TestClock.layer()),
            Effect.runPromise
          )
      )
    )
  })
})

/**
 * A store in front of the memory store that can be made to fail or to hang, as a Redis or Postgres that goes
 * away does; `RateLimitsFromStore` over it, with its log lines captured.
 */
const faultyStore = Effect.gen(function* () {
  const state = { mode: "answers" as "answers" | "fails" | "hangs" }
  const inner = Context.get(yield* Layer.build(Layer.fresh(RateLimiter.layerStoreMemory)), RateLimiter.RateLimiterStore)
  const outage = new RateLimiter.RateLimiterError({
    reason: new RateLimiter.RateLimitStoreError({ message: "connection refused" })
  })
  const guard = <A>(effect: Effect.Effect<A, RateLimiter.RateLimiterError>) =>
    Effect.suspend(() =>
      state.mode === "fails" ? Effect.fail(outage) : state.mode === "hangs" ? Effect.never : effect
    )
  const store = RateLimiter.RateLimiterStore.of({
    fixedWindow: (options) => guard(inner.fixedWindow(options)),
    tokenBucket: (options) => guard(inner.tokenBucket(options)),
    adaptiveConsume: (options) => guard(inner.adaptiveConsume(options)),
    adaptiveFeedback: (options) => guard(inner.adaptiveFeedback(options))
  })
  const lines: Array<string> = []
  const capture = Logger.layer([Logger.make(({ message }) => void lines.push(String(message)))])
  const limits = Context.get(
    yield* Layer.build(
      Layer.fresh(RateLimitsFromStore).pipe(
        Layer.provide(Layer.succeed(RateLimiter.RateLimiterStore)(store)),
        Layer.provide(capture)
      )
    ),
    RateLimits
  )
  const take = (rule: RateBudget, client: string) =>
    limits.take(rule, client).pipe(
      Effect.as("allowed" as string),
      Effect.catchTags({
        RateLimited: (e) => Effect.succeed(`wait ${e.retryAfterSeconds}`),
        Unavailable: () => Effect.succeed("unavailable")
      }),
      Effect.provide(capture)
    )
  return { state, take, lines }
})

describe("RateLimits when its store fails", () => {
  const signIn: RateBudget = { name: "sign-in", limit: 2, windowMillis: 60_000, whenStoreFails: "refuse" }
  const calls: RateBudget = { name: "calls", limit: 2, windowMillis: 60_000, whenStoreFails: "local" }

  it.effect("a refusing budget answers Unavailable; a local one counts in this process; both log once", () =>
    Effect.gen(function* () {
      const { state, take, lines } = yield* faultyStore
      assert.strictEqual(yield* take(calls, "a"), "allowed")
      state.mode = "fails"
      assert.strictEqual(yield* take(signIn, "a"), "unavailable")
      assert.strictEqual(yield* take(signIn, "a"), "unavailable")
      // Counted in this process alone, from nothing: the request the store took before is not known here.
      assert.deepStrictEqual(
        [yield* take(calls, "a"), yield* take(calls, "a"), yield* take(calls, "a")],
        ["allowed", "allowed", "wait 60"]
      )
      assert.strictEqual(lines.filter((line) => line.includes("rate-limit store failed")).length, 1)
      state.mode = "answers"
      assert.strictEqual(yield* take(signIn, "a"), "allowed")
      // The store again: it still holds the request it took before the outage.
      assert.deepStrictEqual([yield* take(calls, "a"), yield* take(calls, "a")], ["allowed", "wait 60"])
      assert.strictEqual(lines.filter((line) => line.includes("answers again")).length, 1)
    }).pipe(Effect.scoped)
  )

  it.effect("a store that does not answer within a second is a store that failed", () =>
    Effect.gen(function* () {
      const { state, take } = yield* faultyStore
      state.mode = "hangs"
      const fiber = yield* Effect.forkChild(
        Effect.all([take(signIn, "b"), take(calls, "b")], { concurrency: "unbounded" })
      )
      yield* Effect.yieldNow
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(yield* Fiber.join(fiber), ["unavailable", "allowed"])
    }).pipe(Effect.scoped)
  )
})
