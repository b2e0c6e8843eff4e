import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { makeSpacedPasses } from "../../core/kernel/Passes.ts"

describe("spaced passes (core/kernel/Passes.ts)", () => {
  it.effect("a pass begins no sooner than the spacing after the previous one began, and at once after a pause", () =>
    Effect.gen(function* () {
      const spaced = makeSpacedPasses(20)
      const starts: Array<number> = []
      const pass = Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => starts.push(now)))
      // The first pass goes at once.
      yield* spaced(pass)
      assert.deepStrictEqual(starts, [0])
      // Woken again 5 ms later: it waits until 20 ms after the first began.
      yield* TestClock.adjust("5 millis")
      const second = yield* Effect.forkChild(spaced(pass))
      yield* TestClock.adjust("14 millis")
      assert.deepStrictEqual(starts, [0])
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(second)
      assert.deepStrictEqual(starts, [0, 20])
      // Woken after a longer pause than the spacing: nothing waits.
      yield* TestClock.adjust("50 millis")
      yield* spaced(pass)
      assert.deepStrictEqual(starts, [0, 20, 70])
    })
  )
})
