import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import * as fc from "fast-check"
import {
  ActionStatus,
  isRunnable,
  stepAction,
  type ActionEvent,
  type ActionState
} from "../../core/decisions/ActionMachine.ts"

const t0 = Date.parse("2030-01-01T00:00:00.000Z")
/** The default policy gives an action six attempts. */
const defaultMaxAttempts = 6

const armed = (optionId: string): ActionState => ({
  id: "act_1",
  optionId,
  type: "record_update",
  summary: "Update Status on a record of tblBBBBBBBBBBBBBB",
  status: "armed",
  attempts: 0
})

/** The rules, written as a table of which event each status accepts. */
const accepts: Record<ActionStatus, ReadonlyArray<ActionEvent["_tag"]>> = {
  armed: ["DecisionResolved"],
  not_triggered: [],
  queued: ["Succeeded", "Failed", "NoCredentials"],
  retrying: ["Succeeded", "Failed", "NoCredentials"],
  waiting_for_setup: ["CredentialsSet"],
  succeeded: [],
  dead_lettered: ["Retry"]
}

const eventArb: fc.Arbitrary<ActionEvent> = fc.oneof(
  fc
    .constantFrom("opt_a", "opt_b", undefined)
    .map((appliedOptionId) => ({ _tag: "DecisionResolved" as const, appliedOptionId })),
  fc.constant({ _tag: "Succeeded" as const }),
  fc.record({
    _tag: fc.constant("Failed" as const),
    error: fc.oneof(fc.string({ maxLength: 400 }), fc.constant("connect ECONNREFUSED 10.0.0.1 at /srv/x.js")),
    retryable: fc.boolean()
  }),
  fc.constant({ _tag: "NoCredentials" as const }),
  fc.constant({ _tag: "CredentialsSet" as const }),
  fc.constant({ _tag: "Retry" as const })
)

describe("the record action state machine (model-based)", () => {
  it("accepts exactly the moves of the table, refuses the rest without change, and keeps its invariants", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("opt_a", "opt_b"),
        fc.array(
          fc.tuple(eventArb, fc.integer({ min: 0, max: 3_600_000 }), fc.double({ min: 0, max: 1, noNaN: true })),
          {
            maxLength: 40
          }
        ),
        (optionId, steps) => {
          let state = armed(optionId)
          let now = t0
          let successes = 0
          for (const [event, tick, jitter] of steps) {
            now += tick
            const before = state
            const result = stepAction(state, event, now, jitter)
            assert.strictEqual(
              Result.isSuccess(result),
              accepts[before.status].includes(event._tag),
              `${event._tag} from ${before.status}`
            )
            if (Result.isFailure(result)) continue
            state = result.success
            // What each accepted move leads to.
            if (event._tag === "DecisionResolved") {
              assert.strictEqual(state.status, event.appliedOptionId === optionId ? "queued" : "not_triggered")
            }
            if (event._tag === "Succeeded") successes++
            if (event._tag === "Failed") {
              assert.strictEqual(state.attempts, before.attempts + 1)
              const retry = event.retryable && state.attempts < defaultMaxAttempts
              assert.strictEqual(state.status, retry ? "retrying" : "dead_lettered")
              assert.isAtMost(state.lastError!.length, 200)
              assert.notInclude(state.lastError!, "/srv")
              assert.notInclude(state.lastError!, "ECONNREFUSED")
              if (retry) {
                // 30 s doubling at each failed attempt, at most an hour, plus up to a quarter for jitter.
                const delay = Date.parse(state.nextAttemptAt!) - now
                const base = Math.min(30_000 * 2 ** (state.attempts - 1), 3_600_000)
                assert.isAtLeast(delay, base)
                assert.isAtMost(delay, Math.min(base * 1.25, 3_600_000))
                assert.isFalse(isRunnable(state, now + delay - 1))
                assert.isTrue(isRunnable(state, now + delay))
              }
            }
            // Invariants after every accepted move.
            assert.isAtLeast(state.attempts, before.attempts)
            assert.strictEqual(state.nextAttemptAt !== undefined, state.status === "retrying")
            assert.strictEqual(state.completedAt !== undefined, state.status === "succeeded")
            if (state.status !== "armed" && state.status !== "not_triggered") assert.isDefined(state.triggeredAt)
          }
          // Performed at most once per trigger: one success at most, and never after not_triggered.
          assert.isAtMost(successes, 1)
        }
      ),
      { numRuns: 500 }
    )
  })

  it("an action dead-letters after its attempts run out, and a manual retry queues it again", () => {
    let state = Result.getOrThrow(
      stepAction(armed("opt_a"), { _tag: "DecisionResolved", appliedOptionId: "opt_a" }, t0, 0)
    )
    for (let i = 0; i < defaultMaxAttempts; i++) {
      state = Result.getOrThrow(
        stepAction(state, { _tag: "Failed", error: "Upstream answered 503", retryable: true }, t0, 0.5)
      )
    }
    assert.strictEqual(state.status, "dead_lettered")
    assert.strictEqual(state.attempts, defaultMaxAttempts)
    assert.strictEqual(state.lastError, "Upstream answered 503")
    const requeued = Result.getOrThrow(stepAction(state, { _tag: "Retry" }, t0, 0))
    assert.strictEqual(requeued.status, "queued")
    assert.isTrue(isRunnable(requeued, t0))
  })
})
