import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { createHmac } from "node:crypto"
import { Webhook } from "standardwebhooks"
import { newSigningSecret } from "../../core/decisions/Webhooks.ts"
import {
  attemptOutcome,
  maxRetryDelaySeconds,
  parseRetrySchedule,
  signedHeaders
} from "../../core/decisions/WebhookDelivery.ts"
import { retryAfterSeconds } from "../../core/kernel/RetryPolicy.ts"
import { WebhookSendFailed } from "../../core/decisions/WebhookSender.ts"

const now = Date.parse("2030-01-01T00:00:00.000Z")
const schedule = [60, 300, 43200]
const context = (attemptsBefore: number, jitter = 0) => ({ attemptsBefore, schedule, nowMs: now, jitter })
const answered = (status: number, retryAfter?: string) => Result.succeed({ status, retryAfter })
const delayOf = (result: ReturnType<typeof attemptOutcome>) =>
  result._tag === "Retry" ? (Date.parse(result.nextAttemptAt) - now) / 1000 : undefined

describe("webhook delivery rules", () => {
  it("2xx is delivered; 4xx other than 408 and 429 is permanent", () => {
    for (const status of [200, 201, 204, 299])
      assert.strictEqual(attemptOutcome(answered(status), context(0))._tag, "Delivered")
    for (const status of [400, 401, 403, 404, 410, 422]) {
      const result = attemptOutcome(answered(status), context(0))
      assert.deepInclude(result, { _tag: "GiveUp", status: "failed", statusCode: status })
    }
  })

  it("408, 429, 5xx, timeouts and network failures retry on the schedule, jittered upwards, then give up", () => {
    const failures = [
      answered(408),
      answered(429),
      answered(500),
      answered(503),
      Result.fail(new WebhookSendFailed({ reason: "timeout", message: "The endpoint did not answer in time." })),
      Result.fail(new WebhookSendFailed({ reason: "network", message: "The endpoint could not be reached." }))
    ]
    for (const failure of failures) {
      assert.strictEqual(delayOf(attemptOutcome(failure, context(0))), 60)
      assert.strictEqual(delayOf(attemptOutcome(failure, context(1, 0.5))), 300 * 1.125)
      // Never over 12 hours, even jittered.
      assert.strictEqual(delayOf(attemptOutcome(failure, context(2, 0.99))), maxRetryDelaySeconds)
      assert.deepInclude(attemptOutcome(failure, context(3)), { _tag: "GiveUp", status: "failed" })
    }
  })

  it("honours Retry-After (seconds or a date) when it asks for longer, capped at 12 hours", () => {
    assert.strictEqual(delayOf(attemptOutcome(answered(429, "600"), context(0))), 600)
    assert.strictEqual(delayOf(attemptOutcome(answered(503, "5"), context(0))), 60)
    assert.strictEqual(delayOf(attemptOutcome(answered(429, "999999"), context(0))), maxRetryDelaySeconds)
    assert.strictEqual(retryAfterSeconds(new Date(now + 120_000).toUTCString(), now), 120)
    assert.isUndefined(retryAfterSeconds("soon", now))
  })

  it("an address the delivery may not reach is permanent", () => {
    const blocked = Result.fail(new WebhookSendFailed({ reason: "blocked_address", message: "not allowed" }))
    assert.deepInclude(attemptOutcome(blocked, context(0)), { _tag: "GiveUp", status: "failed" })
  })

  it("parses WEBHOOK_RETRY_SCHEDULE: positive seconds up to 12 hours, comma-separated", () => {
    assert.deepStrictEqual(Result.getOrThrow(parseRetrySchedule("60, 300,0.5")), [60, 300, 0.5])
    for (const bad of ["", "60,,300", "0", "-1", "abc", "43201", "60;300"]) {
      assert.isTrue(Result.isFailure(parseRetrySchedule(bad)), bad)
    }
  })

  it("signs both header sets so independent verifiers accept them, and a changed body fails both", () => {
    const secret = newSigningSecret()
    const body = JSON.stringify({ id: "01J0000000000000000000000", type: "decision.resolved" })
    const timestampSeconds = Math.floor(Date.now() / 1000)
    const headers = signedHeaders({ secret, deliveryId: "01J0000000000000000000000", body, timestampSeconds })
    const expected = `v1=${createHmac("sha256", secret).update(`${timestampSeconds}.${body}`).digest("hex")}`
    assert.strictEqual(headers["x-decisions-signature"], expected)
    assert.strictEqual(headers["x-decisions-timestamp"], String(timestampSeconds))
    const standard = new Webhook(secret)
    assert.deepStrictEqual(standard.verify(body, headers), JSON.parse(body))
    assert.throws(() => standard.verify(body.replace("resolved", "expired"), headers))
    assert.notStrictEqual(
      `v1=${createHmac("sha256", secret).update(`${timestampSeconds}.${body} `).digest("hex")}`,
      headers["x-decisions-signature"]
    )
  })
})
