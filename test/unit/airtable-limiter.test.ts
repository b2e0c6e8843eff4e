import { assert, describe, it } from "@effect/vitest"
import { Clock, Context, Duration, Effect, Fiber, Layer } from "effect"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { TestClock } from "effect/testing"
import {
  AirtableBusy,
  makeAirtableLimiter,
  type AirtableLimiterOptions
} from "../../adapters/airtable/AirtableLimiter.ts"
import { freshPrefix, redisLayer, testRedisUrl } from "../support/Redis.ts"

/** Two instances' limiters over one store, as two servers share the rate-limit store. */
const twoInstances = (store: Layer.Layer<RateLimiter.RateLimiterStore, unknown>, options?: AirtableLimiterOptions) =>
  Effect.gen(function* () {
    const shared = Context.get(yield* Layer.build(store), RateLimiter.RateLimiterStore)
    const make = makeAirtableLimiter(options).pipe(Effect.provideService(RateLimiter.RateLimiterStore, shared))
    return [yield* make, yield* make] as const
  })

/** The most requests sent within any one second (a window of 1000 ms, its end excluded). */
const mostInOneSecond = (times: ReadonlyArray<number>) => {
  const sorted = [...times].sort((a, b) => a - b)
  let most = 0
  for (let i = 0; i < sorted.length; i++) {
    let j = i
    while (j < sorted.length && sorted[j]! - sorted[i]! < 1000) j++
    most = Math.max(most, j - i)
  }
  return most
}

const base = "appBase0000000001"

/**
 * The clock given, on a machine that stalls: every sleep that would end within `from`..`until` (milliseconds
 * after `origin`) ends at `until` instead, so the fibers it wakes then all wake late and together.
 */
const stallingClock = (clock: Clock.Clock, origin: number, from: number, until: number): Clock.Clock => ({
  ...clock,
  sleep: (duration) =>
    Effect.flatMap(clock.currentTimeMillis, (now) => {
      const end = now + Duration.toMillis(duration) - origin
      return clock.sleep(end > from && end < until ? Duration.millis(origin + until - now) : duration)
    })
})

/** The least time between two consecutive sends. */
const leastGap = (times: ReadonlyArray<number>) => {
  const sorted = [...times].sort((a, b) => a - b)
  return Math.min(...sorted.slice(1).map((time, i) => time - sorted[i]!))
}

describe("AirtableLimiter", () => {
  it.effect("two instances sharing one store never send more than 5 requests to a base in any second", () =>
    Effect.gen(function* () {
      const [a, b] = yield* twoInstances(RateLimiter.layerStoreMemory)
      const sent: Array<number> = []
      const fibers = yield* Effect.forEach(Array.from({ length: 24 }), (_, i) =>
        Effect.forkChild(
          Effect.gen(function* () {
            yield* (i % 2 === 0 ? a : b).turn(base)
            sent.push(yield* Clock.currentTimeMillis)
          })
        )
      )
      for (let step = 0; step < 200 && sent.length < 24; step++) yield* TestClock.adjust(50)
      yield* Fiber.joinAll(fibers)
      assert.lengthOf(sent, 24)
      assert.isAtMost(mostInOneSecond(sent), 5)
      // The turns follow one another at the spacing: 24 requests take a little over 5 seconds, not more.
      assert.isAtMost(Math.max(...sent) - Math.min(...sent), 24 * 250)
    }).pipe(Effect.scoped)
  )

  it.effect("fibers woken late by a stalled machine still send their requests a spacing apart", () =>
    Effect.gen(function* () {
      const [a, b] = yield* twoInstances(RateLimiter.layerStoreMemory)
      const origin = yield* Clock.currentTimeMillis
      // The machine stalls from 100 ms to 1 s: the turns at 250, 500, 750 and 1000 ms all wake at 1 s.
      const clock = stallingClock(yield* Clock.Clock, origin, 100, 1_000)
      const sent: Array<number> = []
      const fibers = yield* Effect.forEach(Array.from({ length: 12 }), (_, i) =>
        Effect.forkChild(
          Effect.gen(function* () {
            yield* (i % 2 === 0 ? a : b).turn(base)
            sent.push(yield* Clock.currentTimeMillis)
          }).pipe(Effect.provideService(Clock.Clock, clock))
        )
      )
      for (let step = 0; step < 400 && sent.length < 12; step++) yield* TestClock.adjust(10)
      yield* Fiber.joinAll(fibers)
      assert.lengthOf(sent, 12)
      // Spaced by when they are sent, not by when their turns were due.
      assert.isAtLeast(leastGap(sent), 250)
      assert.isAtMost(mostInOneSecond(sent), 4)
    }).pipe(Effect.scoped)
  )

  it.effect("each base has its own turns", () =>
    Effect.gen(function* () {
      const [a, b] = yield* twoInstances(RateLimiter.layerStoreMemory)
      yield* a.turn(base)
      const start = yield* Clock.currentTimeMillis
      const other = yield* Effect.forkChild(b.turn("appOtherBase00001"))
      yield* TestClock.adjust(0)
      assert.isDefined(other.pollUnsafe(), "a request to another base does not wait")
      assert.strictEqual(yield* Clock.currentTimeMillis, start)
    }).pipe(Effect.scoped)
  )

  it.effect("after a 429 seen by one instance, no instance sends to that base for 30 seconds", () =>
    Effect.gen(function* () {
      const [a, b] = yield* twoInstances(RateLimiter.layerStoreMemory, { maxWaitMillis: 60_000 })
      yield* a.pause(base, a.pauseAfter429(undefined))
      const waiting = yield* Effect.forkChild(b.turn(base))
      yield* TestClock.adjust(29_999)
      assert.isUndefined(waiting.pollUnsafe(), "still paused at 29.999 s")
      yield* TestClock.adjust(1)
      yield* Fiber.join(waiting)
    }).pipe(Effect.scoped)
  )

  it.effect("a Retry-After longer than 30 seconds is honoured; a shorter one still pauses 30 seconds", () =>
    Effect.gen(function* () {
      const [a, b] = yield* twoInstances(RateLimiter.layerStoreMemory, { maxWaitMillis: 120_000 })
      assert.strictEqual(a.pauseAfter429(5_000), 30_000)
      yield* a.pause(base, a.pauseAfter429(45_000))
      const waiting = yield* Effect.forkChild(b.turn(base))
      yield* TestClock.adjust(44_999)
      assert.isUndefined(waiting.pollUnsafe(), "still paused at 44.999 s")
      yield* TestClock.adjust(1)
      yield* Fiber.join(waiting)
    }).pipe(Effect.scoped)
  )

  it.effect("a request already waiting for its turn when a 429 comes waits out the pause too", () =>
    Effect.gen(function* () {
      const [a, b] = yield* twoInstances(RateLimiter.layerStoreMemory, { maxWaitMillis: 60_000 })
      yield* a.turn(base)
      const queued = yield* Effect.forkChild(b.turn(base))
      yield* TestClock.adjust(100)
      yield* a.pause(base, a.pauseAfter429(undefined))
      yield* TestClock.adjust(29_899)
      assert.isUndefined(queued.pollUnsafe(), "still paused")
      yield* TestClock.adjust(1_000)
      yield* Fiber.join(queued)
    }).pipe(Effect.scoped)
  )

  it.effect("a request whose turn is further off than it may wait fails at once and takes no turn", () =>
    Effect.gen(function* () {
      const [a, b] = yield* twoInstances(RateLimiter.layerStoreMemory)
      yield* a.pause(base, a.pauseAfter429(undefined))
      const busy = yield* Effect.flip(b.turn(base))
      assert.instanceOf(busy, AirtableBusy)
      assert.isAbove(busy.retryAfterMillis, 10_000)
      yield* TestClock.adjust(30_000)
      // A burst: turns for as many as fit in 10 seconds at the spacing; the others are refused at once.
      const burst = yield* Effect.forEach(Array.from({ length: 60 }), (_, i) =>
        Effect.forkChild(Effect.exit((i % 2 === 0 ? a : b).turn(base)))
      )
      yield* TestClock.adjust(0)
      // The refused are answered before any time passes; the first turn too, being now.
      assert.strictEqual(burst.filter((fiber) => fiber.pollUnsafe() !== undefined).length, 1 + 19)
      yield* TestClock.adjust(11_000)
      const outcomes = yield* Fiber.joinAll(burst)
      // Turns 0, 250, ... 10,000 ms away: 41 of them.
      assert.strictEqual(outcomes.filter((exit) => exit._tag === "Success").length, 41)
      // Those refused took no turns: once the queue has drained, the next request goes at once.
      const next = yield* Effect.forkChild(a.turn(base))
      yield* TestClock.adjust(0)
      assert.isDefined(next.pollUnsafe())
    }).pipe(Effect.scoped)
  )
})

if (testRedisUrl !== undefined) {
  const url = testRedisUrl
  /** An instance's limiter over a Redis connection of its own, open for the test's scope. */
  const overRedis = (prefix: string) =>
    Effect.gen(function* () {
      const context = yield* Layer.build(RateLimiter.layerStoreRedis({ prefix }).pipe(Layer.provide(redisLayer(url))))
      return yield* makeAirtableLimiter().pipe(Effect.provideContext(context))
    })

  describe("AirtableLimiter over Redis", () => {
    it.live(
      "two instances, each with its own Redis connection, never send more than 5 requests to a base in any second",
      () =>
        Effect.gen(function* () {
          const prefix = freshPrefix()
          const a = yield* overRedis(prefix)
          const b = yield* overRedis(prefix)
          const sent: Array<number> = []
          yield* Effect.forEach(
            Array.from({ length: 12 }),
            (_, i) =>
              Effect.gen(function* () {
                yield* (i % 2 === 0 ? a : b).turn(base)
                sent.push(Date.now())
              }),
            { concurrency: "unbounded", discard: true }
          )
          assert.lengthOf(sent, 12)
          assert.isAtMost(mostInOneSecond(sent), 5)
        }).pipe(Effect.scoped),
      20_000
    )

    it.live(
      "two instances over Redis send a spacing apart even when a stalled machine wakes their fibers late",
      () =>
        Effect.gen(function* () {
          const prefix = freshPrefix()
          const a = yield* overRedis(prefix)
          const b = yield* overRedis(prefix)
          const origin = Date.now()
          const clock = stallingClock(yield* Clock.Clock, origin, 100, 1_000)
          const sent: Array<number> = []
          yield* Effect.forEach(
            Array.from({ length: 8 }),
            (_, i) =>
              Effect.gen(function* () {
                yield* (i % 2 === 0 ? a : b).turn(base)
                sent.push(Date.now())
              }).pipe(Effect.provideService(Clock.Clock, clock)),
            { concurrency: "unbounded", discard: true }
          )
          assert.lengthOf(sent, 8)
          // Redis keeps times in whole milliseconds: a gap may read a millisecond or two short.
          assert.isAtLeast(leastGap(sent), 240)
          assert.isAtMost(mostInOneSecond(sent), 5)
        }).pipe(Effect.scoped),
      20_000
    )

    it.live("a 429 seen through one connection pauses the base for the other", () =>
      Effect.gen(function* () {
        const prefix = freshPrefix()
        const a = yield* overRedis(prefix)
        const b = yield* overRedis(prefix)
        yield* a.pause(base, a.pauseAfter429(undefined))
        const busy = yield* Effect.flip(b.turn(base))
        assert.isAbove(busy.retryAfterMillis, 20_000)
        // Redis keeps the window's end in whole milliseconds on its own clock: a read may round up by one.
        assert.isAtMost(busy.retryAfterMillis, 30_010)
      }).pipe(Effect.scoped)
    )
  })
}
