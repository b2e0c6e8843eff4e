import { assert, describe, it } from "@effect/vitest"
import { defaultRetrySchedule, webhookRetryPolicy } from "../../core/decisions/WebhookDelivery.ts"
import { producerRetryPolicy } from "../../core/events/ProducerRelay.ts"
import { deliveryRetryPolicy, retryAt } from "../../core/hub/Deliveries.ts"
import { defaultMailRetrySeconds, mailRetryPolicy } from "../../core/hub/MailDeliveries.ts"
import {
  doubling,
  nextAttemptAt,
  retryDelaySeconds,
  scheduled,
  statusVerdict,
  type RetryPolicy
} from "../../core/kernel/RetryPolicy.ts"

/** The waits of the first `n` retries at the given jitter, undefined where the policy gives up. */
const waits = (policy: RetryPolicy, n: number, jitter = 0) =>
  Array.from({ length: n }, (_, attemptsBefore) => retryDelaySeconds(policy, attemptsBefore, jitter))

describe("outbox retry policy", () => {
  it("webhooks: the documented schedule, a minute up to twelve hours, then given up", () => {
    assert.deepStrictEqual(defaultRetrySchedule, [60, 300, 1800, 7200, 21600, 43200])
    assert.deepStrictEqual(waits(webhookRetryPolicy(defaultRetrySchedule), 8), [
      60,
      300,
      1800,
      7200,
      21600,
      43200,
      undefined,
      undefined
    ])
  })

  it("webhooks: jitter adds up to a quarter of a wait, capped at twelve hours", () => {
    const policy = webhookRetryPolicy(defaultRetrySchedule)
    assert.deepStrictEqual(waits(policy, 6, 0.5), [67.5, 337.5, 2025, 8100, 24300, 43200])
    assert.strictEqual(retryDelaySeconds(policy, 0, 0.999999), 60 * (1 + 0.25 * 0.999))
    // A schedule of its own (WEBHOOK_RETRY_SCHEDULE) is followed as given, even below a second.
    assert.deepStrictEqual(waits(webhookRetryPolicy([0.05, 0.1]), 3), [0.05, 0.1, undefined])
  })

  it("producer events: a minute doubling up to twelve hours, never given up", () => {
    assert.deepStrictEqual(
      waits(producerRetryPolicy, 14),
      [60, 120, 240, 480, 960, 1920, 3840, 7680, 15360, 30720, 43200, 43200, 43200, 43200]
    )
    assert.deepStrictEqual(waits(producerRetryPolicy, 3, 0.5), [63, 126, 252])
    assert.strictEqual(retryDelaySeconds(producerRetryPolicy, 100_000, 0.5), 43200)
  })

  it("hub notifications: the configured schedule, jittered up to a quarter, capped at twelve hours, then given up", () => {
    const policy = deliveryRetryPolicy(defaultRetrySchedule)
    assert.deepStrictEqual(waits(policy, 7), [60, 300, 1800, 7200, 21600, 43200, undefined])
    assert.deepStrictEqual(waits(policy, 6, 0.5), [67.5, 337.5, 2025, 8100, 24300, 43200])
    // HUB_DELIVERY_RETRY_SCHEDULE is followed as given, even below a second.
    assert.deepStrictEqual(waits(deliveryRetryPolicy([0.05, 0.1]), 3), [0.05, 0.1, undefined])
    assert.strictEqual(statusVerdict(policy, 302), "permanent")
    // A delivery counts the attempt that failed: after the first, the schedule's first step.
    const nowMs = Date.parse("2030-01-01T00:00:00.000Z")
    assert.strictEqual(retryAt([10, 20], { attempts: 1, nowMs, jitter: 0.5 }), "2030-01-01T00:00:11.250Z")
    assert.strictEqual(retryAt([10, 20], { attempts: 2, nowMs, jitter: 0 }), "2030-01-01T00:00:20.000Z")
    assert.isUndefined(retryAt([10, 20], { attempts: 3, nowMs, jitter: 0 }))
  })

  it("hub mail: five seconds up to an hour (a sign-in link lives fifteen minutes), jittered up to a quarter", () => {
    assert.deepStrictEqual(defaultMailRetrySeconds, [5, 30, 120, 600, 3600])
    const policy = mailRetryPolicy(defaultMailRetrySeconds)
    assert.deepStrictEqual(waits(policy, 6), [5, 30, 120, 600, 3600, undefined])
    assert.deepStrictEqual(waits(policy, 5, 0.5), [5.625, 33.75, 135, 675, 4050])
    assert.strictEqual(retryDelaySeconds(policy, 0, 0.999999), 5 * (1 + 0.25 * 0.999))
  })

  it("a receiver's Retry-After lengthens a wait, never past the cap; producer waits never fall under a minute", () => {
    const webhooks = webhookRetryPolicy(defaultRetrySchedule)
    assert.strictEqual(retryDelaySeconds(webhooks, 0, 0, 600), 600)
    assert.strictEqual(retryDelaySeconds(webhooks, 0, 0, 5), 60)
    assert.strictEqual(retryDelaySeconds(webhooks, 0, 0, 999_999), 43200)
    assert.strictEqual(retryDelaySeconds(producerRetryPolicy, 0, 0, 5), 60)
    assert.strictEqual(retryDelaySeconds(producerRetryPolicy, 1, 0, 900), 900)
    assert.strictEqual(
      retryDelaySeconds({ ...producerRetryPolicy, baseDelaySeconds: scheduled([1]) }, 0, 0),
      60,
      "the minimum holds over the base wait"
    )
  })

  it("an answer is delivered, retried or permanent; 1xx and 3xx as each outbox says", () => {
    const statuses = [101, 200, 204, 302, 400, 404, 408, 409, 429, 500, 503]
    assert.deepStrictEqual(
      statuses.map((status) => statusVerdict(webhookRetryPolicy(defaultRetrySchedule), status)),
      [
        "permanent",
        "delivered",
        "delivered",
        "permanent",
        "permanent",
        "permanent",
        "retry",
        "permanent",
        "retry",
        "retry",
        "retry"
      ]
    )
    assert.deepStrictEqual(
      statuses.map((status) => statusVerdict(producerRetryPolicy, status)),
      [
        "retry",
        "delivered",
        "delivered",
        "retry",
        "permanent",
        "permanent",
        "retry",
        "permanent",
        "retry",
        "retry",
        "retry"
      ]
    )
  })

  it("the next attempt is due the wait after now, rounded to the millisecond", () => {
    const nowMs = Date.parse("2030-01-01T00:00:00.000Z")
    assert.strictEqual(
      nextAttemptAt(producerRetryPolicy, { attemptsBefore: 0, nowMs, jitter: 0.5 }),
      "2030-01-01T00:01:03.000Z"
    )
    assert.isUndefined(nextAttemptAt(webhookRetryPolicy([60]), { attemptsBefore: 1, nowMs, jitter: 0 }))
    assert.strictEqual(doubling(60)(-1), 60)
  })
})
