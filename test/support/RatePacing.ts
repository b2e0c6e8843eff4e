import { assert } from "@effect/vitest"
import { Clock, Effect } from "effect"
import { TestClock } from "effect/testing"
import type { RateBudget } from "../../core/kernel/RateLimit.ts"

/** A take from a budget: undefined when the request may go on, else its Retry-After in seconds. */
export type Take = (rule: RateBudget, client: string) => Effect.Effect<number | undefined, unknown>

/**
 * A busy client takes from `rule` after each of `gaps` (milliseconds of the test clock), and another client
 * takes as well whenever the gap was at least the budget's spacing (window / limit), so it keeps to its rate:
 * that one is never refused, a refusal asks for a wait within the window, and no window admits more than twice
 * the limit of the busy one.
 */
export const keepsToRates = (take: Take, rule: RateBudget, gaps: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    const spacing = Math.ceil(rule.windowMillis / rule.limit)
    const allowedAt: Array<number> = []
    for (const gap of gaps) {
      yield* TestClock.adjust(gap)
      const now = yield* Clock.currentTimeMillis
      const wait = yield* take(rule, "busy")
      if (wait === undefined) allowedAt.push(now)
      else assert.isTrue(wait >= 1 && wait <= Math.ceil(rule.windowMillis / 1000))
      if (gap >= spacing) assert.isUndefined(yield* take(rule, "spaced"))
    }
    for (const at of allowedAt) {
      assert.isAtMost(allowedAt.filter((t) => t > at - rule.windowMillis && t <= at).length, 2 * rule.limit)
    }
  })
