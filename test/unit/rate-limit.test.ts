import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import * as fc from "fast-check"
import { makeRateLimiter } from "../../adapters/http/RateLimiter.ts"
import { HitWindow, takeHit } from "../../core/kernel/RateLimit.ts"

const gapsAndLimit = fc.tuple(
  fc.integer({ min: 1, max: 10 }),
  fc.array(fc.integer({ min: 0, max: 2000 }), { maxLength: 80 })
)

describe("HitWindow", () => {
  it("never allows more than the limit inside any window", () => {
    fc.assert(
      fc.property(gapsAndLimit, ([limit, gaps]) => {
        const rule = { limit, windowMs: 1000 }
        const window = new HitWindow(rule)
        let now = 0
        const allowedAt: Array<number> = []
        for (const gap of gaps) {
          now += gap
          const answer = window.take(now, rule)
          if (answer.allowed) allowedAt.push(now)
          else assert.isAtLeast(answer.retryAfterSeconds, 1)
        }
        for (const at of allowedAt) {
          assert.isAtMost(allowedAt.filter((t) => t > at - 1000 && t <= at).length, limit)
        }
      })
    )
  })

  it("answers exactly as the sliding window over every hit time, Retry-After included", () => {
    fc.assert(
      fc.property(gapsAndLimit, fc.integer({ min: 1, max: 5000 }), ([limit, gaps], windowMs) => {
        const rule = { limit, windowMs }
        const window = new HitWindow(rule)
        let hits: ReadonlyArray<number> = []
        let now = 0
        for (const gap of gaps) {
          now += gap
          const exact = takeHit(hits, now, rule)
          hits = exact.hits
          const answer = window.take(now, rule)
          assert.deepStrictEqual(
            answer,
            exact.allowed ? { allowed: true } : { allowed: false, retryAfterSeconds: exact.retryAfterSeconds }
          )
        }
      })
    )
  })

  it("allows a burst of the whole limit at once, then waits for the oldest hit to leave the window", () => {
    const rule = { limit: 600, windowMs: 60_000 }
    const window = new HitWindow(rule)
    for (let i = 0; i < 600; i++) assert.isTrue(window.take(1_000 + i, rule).allowed)
    assert.deepStrictEqual(window.take(31_000, rule), { allowed: false, retryAfterSeconds: 30 })
    assert.deepStrictEqual(window.take(60_999, rule), { allowed: false, retryAfterSeconds: 1 })
    assert.isTrue(window.take(61_000, rule).allowed)
    assert.isFalse(window.take(61_000, rule).allowed)
    assert.isTrue(window.take(61_001, rule).allowed)
  })

  it("is idle once its newest hit is out of the window", () => {
    const rule = { limit: 3, windowMs: 1000 }
    const window = new HitWindow(rule)
    assert.isTrue(window.idle(0, rule))
    window.take(500, rule)
    assert.isFalse(window.idle(1499, rule))
    assert.isTrue(window.idle(1500, rule))
  })

  it("refuses everything under a limit of zero", () => {
    const rule = { limit: 0, windowMs: 60_000 }
    assert.deepStrictEqual(new HitWindow(rule).take(5, rule), { allowed: false, retryAfterSeconds: 60 })
  })
})

describe("makeRateLimiter", () => {
  it.effect("limits each client on its own and answers the seconds to wait", () =>
    Effect.gen(function* () {
      const limit = makeRateLimiter({ limit: 2, windowMs: 60_000 })
      assert.isUndefined(yield* limit("a"))
      assert.isUndefined(yield* limit("a"))
      assert.strictEqual(yield* limit("a"), 60)
      assert.isUndefined(yield* limit("b"))
      yield* TestClock.adjust("59 seconds")
      assert.strictEqual(yield* limit("a"), 1)
      yield* TestClock.adjust("1 second")
      assert.isUndefined(yield* limit("a"))
    })
  )
})
