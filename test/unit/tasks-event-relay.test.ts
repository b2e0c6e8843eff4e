import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { Hub } from "../../core/kernel/Limits.ts"
import { relayOutcome, retryDelaySeconds } from "../../core/events/ProducerRelay.ts"
import { HubPublishFailed } from "../../core/events/HubEventPublisher.ts"

const now = Date.parse("2030-01-01T00:00:00.000Z")
const context = (attemptsBefore: number, jitter = 0) => ({ attemptsBefore, nowMs: now, jitter })
const answered = (status: number, retryAfter?: string) => Result.succeed({ status, retryAfter })
const delayOf = (outcome: ReturnType<typeof relayOutcome>) =>
  outcome._tag === "Retry" ? (Date.parse(outcome.nextAttemptAt) - now) / 1000 : undefined

const transient = [
  answered(408),
  answered(429),
  answered(500),
  answered(502),
  answered(503),
  Result.fail(new HubPublishFailed({ reason: "timeout", message: "The hub did not answer in time." })),
  Result.fail(new HubPublishFailed({ reason: "network", message: "The hub could not be reached." }))
]

describe("task event relay rules", () => {
  it("any 2xx is delivered, a duplicate's 200 included", () => {
    for (const status of [200, 202, 204]) {
      assert.deepStrictEqual(relayOutcome(answered(status), context(3)), {
        _tag: "Delivered",
        at: "2030-01-01T00:00:00.000Z",
        statusCode: status
      })
    }
  })

  it("any 4xx but 408 and 429 is permanent: never retried", () => {
    for (const status of [400, 401, 403, 404, 409, 413, 422]) {
      assert.deepStrictEqual(relayOutcome(answered(status, "60"), context(0)), {
        _tag: "Failed",
        at: "2030-01-01T00:00:00.000Z",
        error: `The hub answered ${status}.`,
        statusCode: status
      })
    }
  })

  it("408, 429, 5xx and transport failures are retried, from 60 s doubling up to 12 hours, never giving up", () => {
    for (const failure of transient) {
      const delays = Array.from({ length: 16 }, (_, n) => delayOf(relayOutcome(failure, context(n))))
      assert.deepStrictEqual(delays, [60, 120, 240, 480, 960, 1920, 3840, 7680, 15360, 30720, ...Array(6).fill(43200)])
      assert.strictEqual(delayOf(relayOutcome(failure, context(10_000, 0.999))), Hub.eventRedeliveryMaxSeconds)
    }
    assert.deepInclude(relayOutcome(answered(503), context(0)), { error: "The hub answered 503.", statusCode: 503 })
    assert.deepInclude(relayOutcome(transient[6]!, context(0)), { error: "The hub could not be reached." })
    assert.isUndefined(relayOutcome(transient[6]!, context(0)).statusCode)
  })

  it("jitter adds up to a tenth of a delay, staying within 60 s .. 12 h", () => {
    assert.strictEqual(retryDelaySeconds(0, 0.5), 63)
    assert.strictEqual(retryDelaySeconds(2, 0.5), 252)
    for (let n = 0; n < 20; n++) {
      for (const jitter of [0, 0.3, 0.999]) {
        const delay = retryDelaySeconds(n, jitter)
        assert.isAtLeast(delay, retryDelaySeconds(n, 0))
        assert.isAtLeast(delay, Hub.eventRedeliveryMinSeconds)
        assert.isAtMost(delay, Hub.eventRedeliveryMaxSeconds)
      }
    }
  })

  it("honours Retry-After (seconds or a date) when it asks for longer, capped at 12 hours", () => {
    assert.strictEqual(delayOf(relayOutcome(answered(429, "600"), context(0))), 600)
    assert.strictEqual(delayOf(relayOutcome(answered(503, "5"), context(0))), 60)
    assert.strictEqual(delayOf(relayOutcome(answered(429, new Date(now + 900_000).toUTCString()), context(0))), 900)
    assert.strictEqual(delayOf(relayOutcome(answered(429, "999999"), context(0))), Hub.eventRedeliveryMaxSeconds)
    assert.strictEqual(delayOf(relayOutcome(answered(429, "soon"), context(1))), 120)
  })

  it("an answer the spec does not name (1xx, 3xx) is retried rather than dropped", () => {
    for (const status of [101, 301, 302, 307])
      assert.strictEqual(delayOf(relayOutcome(answered(status), context(0))), 60)
  })
})
