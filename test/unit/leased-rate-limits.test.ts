import { keepsToRates } from "../support/RatePacing.ts"
import { assert, describe, it } from "@effect/vitest"
import { Clock, Context, Deferred, Duration, Effect, Fiber, Layer } from "effect"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { TestClock } from "effect/testing"
import * as fc from "fast-check"
import { coalesceFixedWindow, leaseTokens } from "../../adapters/http/CoalescedRateLimiterStore.ts"
import { RateLimitsFromStore } from "../../adapters/http/RateLimits.ts"
import { RateLimits, type RateBudget } from "../../core/kernel/RateLimit.ts"

type Store = RateLimiter.RateLimiterStore["Service"]

/**
 * One memory store, as the instances behind a load balancer share Redis or Postgres, that records every
 * `fixedWindow` call reaching it (its tokens and the count answered), can hold the calls until released,
 * and can answer late (the clock moves on between the store counting and the answer arriving).
 */
const sharedStore = Effect.gen(function* () {
  const inner = Context.get(yield* Layer.build(Layer.fresh(RateLimiter.layerStoreMemory)), RateLimiter.RateLimiterStore)
  const calls: Array<{ readonly tokens: number; readonly count: number }> = []
  const state = { answersAfter: 0, hold: undefined as Deferred.Deferred<void> | undefined }
  const store = RateLimiter.RateLimiterStore.of({
    ...inner,
    fixedWindow: (options) =>
      Effect.gen(function* () {
        if (state.hold !== undefined) yield* Deferred.await(state.hold)
        const answer = yield* inner.fixedWindow(options)
        calls.push({ tokens: options.tokens, count: answer[0] })
        if (state.answersAfter > 0) yield* TestClock.adjust(state.answersAfter)
        return answer
      })
  })
  const hold = () => {
    const gate = Deferred.makeUnsafe<void>()
    state.hold = gate
    return Effect.sync(() => {
      state.hold = undefined
      Deferred.doneUnsafe(gate, Effect.void)
    })
  }
  /** `n` instances, each its own coalescing and leasing in front of the one store. */
  const instances = (n: number) =>
    Effect.forEach(Array.from({ length: n }), () => coalesceFixedWindow(store, "1 minute", leaseTokens))
  return { inner, calls, state, hold, instances }
})

const window = Duration.minutes(1)
const take = (store: Store, limit: number, tokens = 1) =>
  store.fixedWindow({ key: "client", tokens, refillRate: Duration.divideUnsafe(window, limit), limit })
const admitted = ([count]: readonly [number, number], limit: number) => count <= limit

describe("leased budgets across instances sharing one store", () => {
  it.effect("when every instance keeps taking, one window admits exactly the limit, in far fewer store calls", () =>
    Effect.gen(function* () {
      const { calls, instances } = yield* sharedStore
      const three = yield* instances(3)
      const limit = 500
      let passed = 0
      for (let i = 0; i < 900; i++) if (admitted(yield* take(three[i % 3]!, limit), limit)) passed++
      assert.strictEqual(passed, limit)
      // Far from the limit a call serves 16 takes; near it every take is a call, and so is every refusal.
      assert.isBelow(calls.filter((call) => call.count <= limit).length, limit / 4)
    }).pipe(Effect.scoped)
  )

  it("whatever the order of takes over the instances: never more than the limit, and the shortfall is bounded", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 1, max: 3 }),
        fc.array(fc.nat({ max: 2 }), { maxLength: 600, size: "max" }),
        (limit, n, order) =>
          Effect.gen(function* () {
            const { instances } = yield* sharedStore
            const all = yield* instances(n)
            let passed = 0
            for (const i of order) {
              const answer = yield* take(all[i % n]!, limit)
              if (admitted(answer, limit)) passed++
              else assert.strictEqual(answer[0], limit + 1, "a refusal tells the count the store would")
            }
            assert.isAtMost(passed, limit)
            // A refusal comes only when the window is full, and the window then holds, beyond what was admitted,
            // the unspent leases of the other instances: 15 at most each.
            assert.isAtLeast(passed, Math.min(order.length, limit - (n - 1) * (leaseTokens - 1)))
          }).pipe(Effect.scoped, Effect.provide(TestClock.layer()), Effect.runPromise)
      )
    )
  })

  it("under a high limit, whatever the order: never more than the limit, and the shortfall is bounded", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 16_000, max: 60_000 }),
        fc.integer({ min: 0, max: 700 }),
        fc.integer({ min: 1, max: 3 }),
        fc.array(fc.nat({ max: 2 }), { maxLength: 800, size: "max" }),
        (limit, room, n, order) =>
          Effect.gen(function* () {
            const { inner, instances } = yield* sharedStore
            const all = yield* instances(n)
            // Other clients of the store (or instances gone since) have filled the window but for `room`.
            if (room < limit) yield* take(inner, limit, limit - room)
            let passed = 0
            for (const i of order) if (admitted(yield* take(all[i % n]!, limit), limit)) passed++
            assert.isAtMost(passed, room)
            // What the others hold back is a thousandth of the limit at most each, less one.
            const cap = Math.floor(limit / 1000)
            assert.isAtLeast(passed, Math.min(order.length, room - (n - 1) * (cap - 1)))
          }).pipe(Effect.scoped, Effect.provide(TestClock.layer()), Effect.runPromise)
      ),
      { numRuns: 60 }
    )
  })

  it.effect("near the limit every take reaches the store with its own token", () =>
    Effect.gen(function* () {
      const { calls, instances } = yield* sharedStore
      const [one] = yield* instances(1)
      const limit = 200
      // What the last call left in the window, and the tokens it took ahead that no take has received yet.
      let seen = 0
      let held = 0
      for (let i = 0; i < 260; i++) {
        const before = calls.length
        const answer = yield* take(one!, limit)
        if (held === 0 && limit - seen <= 8) {
          assert.strictEqual(calls.length, before + 1, `take ${i} went to the store`)
          assert.strictEqual(calls.at(-1)!.tokens, 1)
        }
        if (calls.length === before) held--
        else {
          const call = calls.at(-1)!
          seen = Math.min(call.count, limit)
          held = call.count <= limit ? call.tokens - 1 : 0
        }
        // Answers from a lease count on from the lease's call: one instance sees 1, 2, 3, ... as alone.
        assert.strictEqual(answer[0], Math.min(i + 1, limit + 1))
      }
      // No call took more than an eighth of what was left after its own token.
      let before = 0
      for (const call of calls) {
        assert.isAtMost(call.tokens - 1, Math.max(0, Math.floor((limit - before - 1) / 8)))
        if (call.count <= limit) before = call.count
      }
    }).pipe(Effect.scoped)
  )

  it.effect("far from a high limit a lease holds a thousandth of it, and lasts a thousandth of the window", () =>
    Effect.gen(function* () {
      const { calls, instances } = yield* sharedStore
      const two = yield* instances(2)
      const limit = 1_000_000
      for (let i = 0; i < 8000; i++) assert.isTrue(admitted(yield* take(two[i % 2]!, limit), limit))
      // One call of one token per instance before it knows the window, then one per lease of 1000.
      assert.isAtMost(calls.length, 2 + 8000 / 1000)
      assert.deepStrictEqual(
        calls.slice(2).map((call) => call.tokens),
        calls.slice(2).map(() => 1000)
      )
      // Each token moves the window's end 60 µs on: a lease of 1000 moves it 60 ms.
      const [count, ttl] = yield* take(two[0]!, limit)
      assert.isAtMost(count, 8001)
      assert.isAtLeast(ttl, 60)
    }).pipe(Effect.scoped)
  )

  it.effect("far from the limit a client's takes reach the store once in 16", () =>
    Effect.gen(function* () {
      const { calls, instances } = yield* sharedStore
      const two = yield* instances(2)
      const limit = 10_000
      for (let i = 0; i < 1600; i++) assert.isTrue(admitted(yield* take(two[i % 2]!, limit), limit))
      // One call of one token per instance before it knows the window, then one per lease of 16.
      assert.isAtMost(calls.length, 2 + 1600 / leaseTokens)
      assert.deepStrictEqual(
        calls.slice(2).map((call) => call.tokens),
        calls.slice(2).map(() => leaseTokens)
      )
    }).pipe(Effect.scoped)
  )

  it.effect("a lease is not used once its window has ended, even when the store's answer came late", () =>
    Effect.gen(function* () {
      const { calls, state, instances } = yield* sharedStore
      const [one] = yield* instances(1)
      // 1000 a minute: each token counted moves the window's end 60 ms on. Answers arrive 40 ms after the count.
      const limit = 1000
      state.answersAfter = 40
      assert.deepStrictEqual(yield* take(one!, limit), [1, 60])
      // Taken at 40 ms: 1 + 16 counted, the window ends at 17 × 60 = 1020 ms; the answer arrives at 80 ms.
      assert.deepStrictEqual(yield* take(one!, limit), [2, 980])
      assert.deepStrictEqual(
        calls.map((call) => call.tokens),
        [1, leaseTokens]
      )
      state.answersAfter = 0
      yield* TestClock.adjust(1019 - (yield* Clock.currentTimeMillis))
      assert.deepStrictEqual(yield* take(one!, limit), [3, 1])
      assert.strictEqual(calls.length, 2, "a take within the window is answered from the lease")
      yield* TestClock.adjust(1)
      // The store's window ended at 1020 ms: the take reaches the store and opens a new window, leasing at once
      // (the ended window tells that a new one starts empty).
      assert.deepStrictEqual(yield* take(one!, limit), [1, 960])
      assert.deepStrictEqual(
        calls.map((call) => call.tokens),
        [1, leaseTokens, leaseTokens]
      )
    }).pipe(Effect.scoped)
  )

  it.effect("a take that fits alone is not refused when its lease does not fit; then exactly the room passes", () =>
    Effect.gen(function* () {
      const { inner, calls, instances } = yield* sharedStore
      const [mine] = yield* instances(1)
      const limit = 100
      assert.deepStrictEqual((yield* take(mine!, limit))[0], 1)
      // Other instances fill the window to 98 meanwhile; this one still believes 99 are left.
      yield* take(inner, limit, 97)
      assert.deepStrictEqual((yield* take(mine!, limit))[0], 99)
      assert.deepStrictEqual((yield* take(mine!, limit))[0], 100)
      assert.deepStrictEqual((yield* take(mine!, limit))[0], 101)
      // The lease of 1 + 12 was refused, the take went again with its own token; then one by one.
      assert.deepStrictEqual(
        calls.map((call) => call.tokens),
        [1, 13, 1, 1, 1]
      )
    }).pipe(Effect.scoped)
  )

  it("a burst arriving on a stale view of the window: exactly the takes that fit pass", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .integer({ min: 2, max: 300 })
          .chain((limit) =>
            fc.tuple(fc.constant(limit), fc.integer({ min: 0, max: limit - 1 }), fc.integer({ min: 1, max: 60 }))
          ),
        ([limit, filled, burst]) =>
          Effect.gen(function* () {
            const { inner, hold, instances } = yield* sharedStore
            const [mine] = yield* instances(1)
            yield* take(mine!, limit)
            yield* take(inner, limit, filled)
            const release = hold()
            const takes = yield* Effect.forEach(Array.from({ length: burst }), () =>
              Effect.forkChild(take(mine!, limit), { startImmediately: true })
            )
            yield* release
            const answers = yield* Effect.forEach(takes, Fiber.join)
            const room = limit - 1 - filled
            assert.strictEqual(answers.filter((answer) => admitted(answer, limit)).length, Math.min(burst, room))
          }).pipe(Effect.scoped, Effect.provide(TestClock.layer()), Effect.runPromise)
      )
    )
  })

  it.effect("the token bucket passes straight through", () =>
    Effect.gen(function* () {
      const { inner, instances } = yield* sharedStore
      const [one] = yield* instances(1)
      const bucket = { key: "b", tokens: 1, limit: 2, refillRate: Duration.seconds(1), allowOverflow: false }
      assert.deepStrictEqual(yield* one!.tokenBucket(bucket), [1, 0])
      assert.deepStrictEqual(yield* inner.tokenBucket(bucket), [0, 0])
      assert.deepStrictEqual(yield* one!.tokenBucket(bucket), [-1, 0])
    }).pipe(Effect.scoped)
  )
})

describe("RateLimits with leases", () => {
  const budget = (limit: number, windowMillis: number): RateBudget => ({
    name: "test",
    limit,
    windowMillis,
    whenStoreFails: "local"
  })

  /** Instances of RateLimits over one memory store: undefined when a take passes, else the seconds to wait. */
  const instancesOfRateLimits = (n: number) =>
    Effect.gen(function* () {
      const store = Context.get(
        yield* Layer.build(Layer.fresh(RateLimiter.layerStoreMemory)),
        RateLimiter.RateLimiterStore
      )
      return yield* Effect.forEach(Array.from({ length: n }), () =>
        Effect.gen(function* () {
          const limits = Context.get(
            yield* Layer.build(
              Layer.fresh(RateLimitsFromStore).pipe(Layer.provide(Layer.succeed(RateLimiter.RateLimiterStore)(store)))
            ),
            RateLimits
          )
          return (rule: RateBudget, client: string) =>
            limits.take(rule, client).pipe(
              Effect.as(undefined),
              Effect.catchTag("RateLimited", (e) => Effect.succeed(e.retryAfterSeconds))
            )
        })
      )
    })

  it.effect("a refused request waits until the window closes, as without leases", () =>
    Effect.gen(function* () {
      const [a, b] = yield* instancesOfRateLimits(2)
      const rule = budget(100, 60_000)
      const answers: Array<number | undefined> = []
      for (let i = 0; i < 130; i++) answers.push(yield* (i % 2 === 0 ? a! : b!)(rule, "acme"))
      assert.strictEqual(answers.filter((answer) => answer === undefined).length, 100)
      assert.isTrue(answers.slice(100).every((answer) => answer === 60))
      yield* TestClock.adjust("60 seconds")
      assert.isUndefined(yield* a!(rule, "acme"))
    }).pipe(Effect.scoped)
  )

  it("on one instance a client within its rate is never refused; no window holds more than twice the limit", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 9, max: 400 }),
        fc.array(fc.integer({ min: 0, max: 30 }), { maxLength: 300, size: "max" }),
        (limit, gaps) =>
          Effect.flatMap(instancesOfRateLimits(1), ([take]) => keepsToRates(take!, budget(limit, 1000), gaps)).pipe(
            Effect.scoped,
            Effect.provide(TestClock.layer()),
            Effect.runPromise
          )
      )
    )
  })
})
