import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Duration, Effect, Fiber, Layer } from "effect"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { TestClock } from "effect/testing"
import * as fc from "fast-check"
import { coalesceFixedWindow } from "../../adapters/http/CoalescedRateLimiterStore.ts"
import { RateLimitsFromStore } from "../../adapters/http/RateLimits.ts"
import { RateLimits, type RateBudget } from "../../core/kernel/RateLimit.ts"

/**
 * A memory store that records every `fixedWindow` call (its key and tokens), can hold the calls of the keys
 * starting with a given prefix until released (a call on its way), and can be made to fail.
 */
const countingStore = Effect.gen(function* () {
  const inner = Context.get(yield* Layer.build(Layer.fresh(RateLimiter.layerStoreMemory)), RateLimiter.RateLimiterStore)
  const calls: Array<{ readonly key: string; readonly tokens: number }> = []
  const holds = new Map<string, Deferred.Deferred<void>>()
  const state = { fails: false }
  const outage = new RateLimiter.RateLimiterError({
    reason: new RateLimiter.RateLimitStoreError({ message: "connection refused" })
  })
  const store = RateLimiter.RateLimiterStore.of({
    ...inner,
    fixedWindow: (options) =>
      Effect.suspend(() => {
        calls.push({ key: options.key, tokens: options.tokens })
        const hold = [...holds].find(([prefix]) => options.key.startsWith(prefix))?.[1]
        return Effect.andThen(
          hold === undefined ? Effect.void : Deferred.await(hold),
          Effect.suspend(() => (state.fails ? Effect.fail(outage) : inner.fixedWindow(options)))
        )
      })
  })
  const hold = (prefix: string) => {
    const gate = Deferred.makeUnsafe<void>()
    holds.set(prefix, gate)
    return Effect.sync(() => {
      holds.delete(prefix)
      Deferred.doneUnsafe(gate, Effect.void)
    })
  }
  const tokensOf = (prefix: string) => calls.filter((call) => call.key.startsWith(prefix)).map((call) => call.tokens)
  /** Lets the forked fibers run until `n` calls have reached the store. */
  const callsReach = (n: number) =>
    Effect.gen(function* () {
      for (let i = 0; i < 100 && calls.length < n; i++) yield* Effect.yieldNow
      assert.strictEqual(calls.length, n)
    })
  return { inner, store, calls, state, hold, tokensOf, callsReach }
})

const settled = Effect.gen(function* () {
  // Lets the members that were forked reach their lane before the held call is released.
  for (let i = 0; i < 20; i++) yield* Effect.yieldNow
})

const refill = Duration.seconds(1)
const take = (store: RateLimiter.RateLimiterStore["Service"], key: string, limit: number, tokens = 1) =>
  store.fixedWindow({ key, tokens, refillRate: refill, limit })
const start = <A, E>(effect: Effect.Effect<A, E>) => Effect.forkChild(effect, { startImmediately: true })

describe("coalesceFixedWindow", () => {
  it.effect("a lone take goes to the store at once, with its own tokens", () =>
    Effect.gen(function* () {
      const { store, calls } = yield* countingStore
      const coalesced = yield* coalesceFixedWindow(store, "1 second")
      // No clock moves here: a take that waited on a timer would never answer.
      assert.deepStrictEqual(yield* take(coalesced, "k", 10), [1, 1000])
      assert.deepStrictEqual(yield* take(coalesced, "k", 10, 3), [4, 4000])
      assert.deepStrictEqual(
        calls.map((call) => call.tokens),
        [1, 3]
      )
    }).pipe(Effect.scoped)
  )

  it.effect("takes of one key arriving while its call is on the way share the next call, each with its own count", () =>
    Effect.gen(function* () {
      const { store, hold, tokensOf, callsReach } = yield* countingStore
      const coalesced = yield* coalesceFixedWindow(store, "1 second")
      const release = hold("k")
      const opener = yield* start(take(coalesced, "k", 10))
      yield* callsReach(1)
      const members = yield* Effect.forEach([1, 2, 3, 4, 5], () => start(take(coalesced, "k", 10)))
      yield* release
      assert.deepStrictEqual(yield* Fiber.join(opener), [1, 1000])
      const answers = yield* Effect.forEach(members, Fiber.join)
      assert.deepStrictEqual(
        answers.map(([count]) => count),
        [2, 3, 4, 5, 6]
      )
      assert.isTrue(answers.every(([, ttl]) => ttl === 6000))
      assert.deepStrictEqual(tokensOf("k"), [1, 5])
    }).pipe(Effect.scoped)
  )

  it("across a burst at the limit, exactly the takes that fit pass, in arrival order", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .integer({ min: 1, max: 8 })
          .chain((limit) =>
            fc.tuple(fc.constant(limit), fc.integer({ min: 1, max: limit }), fc.integer({ min: 1, max: 20 }))
          ),
        ([limit, opened, burst]) =>
          Effect.gen(function* () {
            const { inner, store, hold, tokensOf, callsReach } = yield* countingStore
            const coalesced = yield* coalesceFixedWindow(store, "1 second")
            const release = hold("k")
            const opener = yield* start(take(coalesced, "k", limit, opened))
            yield* callsReach(1)
            const members = yield* Effect.forEach(Array.from({ length: burst }), () =>
              start(take(coalesced, "k", limit))
            )
            yield* release
            yield* Fiber.join(opener)
            const answers = yield* Effect.forEach(members, Fiber.join)
            const passed = answers.map(([count]) => count <= limit)
            const room = Math.min(burst, limit - opened)
            assert.deepStrictEqual(
              passed,
              answers.map((_, place) => place < room)
            )
            for (const [count, ttl] of answers.slice(room)) {
              assert.strictEqual(count, limit + 1)
              assert.strictEqual(ttl, limit * 1000)
            }
            // The window holds what was admitted, and no more.
            assert.deepStrictEqual(yield* take(inner, "k", limit, 0), [opened + room, (opened + room) * 1000])
            assert.isAtMost(tokensOf("k").length, 2 + room + Math.ceil(burst / limit))
          }).pipe(Effect.scoped, Effect.provide(TestClock.layer()), Effect.runPromise)
      )
    )
  })

  it.effect("a take that waited behind a slow call still fails as slow within its own second of waiting", () =>
    Effect.gen(function* () {
      const { inner } = yield* countingStore
      // Each call waits until the test answers it.
      const answers: Array<Deferred.Deferred<readonly [number, number], RateLimiter.RateLimiterError>> = []
      const store = RateLimiter.RateLimiterStore.of({
        ...inner,
        fixedWindow: () =>
          Effect.suspend(() => {
            const answer = Deferred.makeUnsafe<readonly [number, number], RateLimiter.RateLimiterError>()
            answers.push(answer)
            return Deferred.await(answer)
          })
      })
      const coalesced = yield* coalesceFixedWindow(store, "1 second")
      const opener = yield* start(take(coalesced, "k", 10))
      yield* TestClock.adjust("500 millis")
      const waiting = yield* start(take(coalesced, "k", 10))
      yield* TestClock.adjust("400 millis")
      Deferred.doneUnsafe(answers[0]!, Effect.succeed([1, 1000] as const))
      assert.deepStrictEqual(yield* Fiber.join(opener), [1, 1000])
      yield* settled
      // Its own call is on its way now and does not answer: it has 600 ms of its second left, not a new second.
      assert.strictEqual(answers.length, 2)
      yield* TestClock.adjust("600 millis")
      const exit = yield* Fiber.await(waiting)
      assert.isTrue(exit._tag === "Failure")
    }).pipe(Effect.scoped)
  )

  it.effect("different keys do not wait on each other", () =>
    Effect.gen(function* () {
      const { store, hold, tokensOf, callsReach } = yield* countingStore
      const coalesced = yield* coalesceFixedWindow(store, "1 minute")
      yield* hold("a")
      yield* start(take(coalesced, "a", 10))
      yield* callsReach(1)
      assert.deepStrictEqual(yield* take(coalesced, "b", 10), [1, 1000])
      assert.deepStrictEqual(yield* take(coalesced, "b", 10), [2, 2000])
      assert.deepStrictEqual(tokensOf("b"), [1, 1])
    }).pipe(Effect.scoped)
  )

  it.effect("an interrupted take is left out; the takes waiting with it are answered", () =>
    Effect.gen(function* () {
      const { store, hold, tokensOf, callsReach } = yield* countingStore
      const coalesced = yield* coalesceFixedWindow(store, "1 second")
      const release = hold("k")
      const opener = yield* start(take(coalesced, "k", 10))
      yield* callsReach(1)
      const [a, b, c] = yield* Effect.forEach([1, 2, 3], () => start(take(coalesced, "k", 10)))
      // The opener's call is on its way (it is counted); b is still waiting (it is not sent).
      yield* Fiber.interrupt(opener)
      yield* Fiber.interrupt(b!)
      yield* release
      assert.deepStrictEqual(yield* Fiber.join(a!), [2, 3000])
      assert.deepStrictEqual(yield* Fiber.join(c!), [3, 3000])
      assert.deepStrictEqual(tokensOf("k"), [1, 2])
      assert.deepStrictEqual(yield* take(coalesced, "k", 10), [4, 4000])
    }).pipe(Effect.scoped)
  )
})

describe("RateLimits over the coalesced store", () => {
  /** RateLimits over the counting store (it coalesces the store itself). */
  const limitsOver = Effect.gen(function* () {
    const counting = yield* countingStore
    const limits = Context.get(
      yield* Layer.build(
        Layer.fresh(RateLimitsFromStore).pipe(
          Layer.provide(Layer.succeed(RateLimiter.RateLimiterStore)(counting.store))
        )
      ),
      RateLimits
    )
    const outcome = (budget: RateBudget, client: string) =>
      limits.take(budget, client).pipe(
        Effect.as("allowed" as string),
        Effect.catchTags({
          RateLimited: (e) => Effect.succeed(`wait ${e.retryAfterSeconds}`),
          Unavailable: () => Effect.succeed("unavailable")
        })
      )
    return { ...counting, outcome }
  })

  const burstDuringOutage = (budget: RateBudget) =>
    Effect.gen(function* () {
      const { outcome, hold, state, tokensOf, callsReach } = yield* limitsOver
      const release = hold(budget.name)
      const opener = yield* Effect.forkChild(outcome(budget, "a"))
      yield* callsReach(1)
      const members = yield* Effect.forEach([1, 2, 3], () => Effect.forkChild(outcome(budget, "a")))
      yield* settled
      state.fails = true
      yield* release
      const answers = [yield* Fiber.join(opener), ...(yield* Effect.forEach(members, Fiber.join))]
      return { answers, tokens: tokensOf(budget.name) }
    }).pipe(Effect.scoped)

  it.effect("a failed call fails each of its takes as the budget says: a refusing budget answers Unavailable", () =>
    Effect.gen(function* () {
      const { answers, tokens } = yield* burstDuringOutage({
        name: "sign-in",
        limit: 5,
        windowMillis: 60_000,
        whenStoreFails: "refuse"
      })
      assert.deepStrictEqual(tokens, [1, 3])
      assert.deepStrictEqual(answers, ["unavailable", "unavailable", "unavailable", "unavailable"])
    })
  )

  it.effect("a failed call fails each of its takes as the budget says: a local budget counts them here", () =>
    Effect.gen(function* () {
      const { answers, tokens } = yield* burstDuringOutage({
        name: "calls",
        limit: 3,
        windowMillis: 60_000,
        whenStoreFails: "local"
      })
      assert.deepStrictEqual(tokens, [1, 3])
      assert.deepStrictEqual(answers, ["allowed", "allowed", "allowed", "wait 60"])
    })
  )

  it.effect("a burst of one client's requests: exactly the limit passes, the rest wait", () =>
    Effect.gen(function* () {
      const { outcome, calls } = yield* limitsOver
      const budget: RateBudget = { name: "burst", limit: 5, windowMillis: 60_000, whenStoreFails: "local" }
      const answers = yield* Effect.forEach(Array.from({ length: 12 }), () => outcome(budget, "a"), {
        concurrency: "unbounded"
      })
      assert.strictEqual(answers.filter((answer) => answer === "allowed").length, 5)
      assert.isTrue(answers.filter((answer) => answer !== "allowed").every((answer) => answer === "wait 60"))
      assert.isBelow(calls.length, 12)
    }).pipe(Effect.scoped)
  )
})
