import { Result } from "effect"
import { sign } from "../auth/Signature.ts"
import { signStandardWebhook } from "../auth/StandardWebhook.ts"
import {
  maxRetryWaitSeconds,
  nextAttemptAt,
  retryAfterSeconds,
  scheduled,
  statusVerdict,
  type RetryPolicy
} from "../kernel/RetryPolicy.ts"
import { isoAt } from "../kernel/Timestamp.ts"
import type { DecisionStatus } from "./Decision.ts"
import type { DeliveryResult } from "./WebhookOutbox.ts"
import type { WebhookAnswer, WebhookSendFailed } from "./WebhookSender.ts"

/** The moves that send a webhook. */
export const webhookStatuses: ReadonlyArray<DecisionStatus> = ["needs_info", "resolved", "expired", "cancelled"]

/** Seconds before each retry: from 60 s up to 12 h, the last step repeated no more. */
export const defaultRetrySchedule: ReadonlyArray<number> = [60, 300, 1800, 7200, 21600, 43200]

/** The longest wait between two attempts, every outbox's (core/kernel/RetryPolicy.ts). */
export const maxRetryDelaySeconds = maxRetryWaitSeconds

/**
 * `WEBHOOK_RETRY_SCHEDULE`: seconds, comma-separated, each above 0 and at most 12 hours (decimals allowed,
 * so tests can run a fast schedule). Its length is how many retries follow the first attempt.
 */
export const parseRetrySchedule = (text: string): Result.Result<ReadonlyArray<number>, string> => {
  const parts = text.split(",").map((part) => part.trim())
  const seconds = parts.map(Number)
  if (parts.length === 0 || parts.some((p) => p === "") || seconds.some((s) => !(s > 0 && s <= maxRetryDelaySeconds)))
    return Result.fail(`expected seconds between 0 and ${maxRetryDelaySeconds}, comma-separated, e.g. 60,300,1800`)
  return Result.succeed(seconds)
}

export interface AttemptContext {
  /** Attempts made before this one. */
  readonly attemptsBefore: number
  readonly schedule: ReadonlyArray<number>
  readonly nowMs: number
  /** In [0, 1), from the edge: spreads retries over [delay, 1.25 × delay). */
  readonly jitter: number
}

/**
 * The webhook outbox's retry policy: the schedule's next delay plus up to a quarter of it, never less than
 * `Retry-After`, never over 12 hours, until the schedule runs out; a 1xx or 3xx answer is permanent.
 */
export const webhookRetryPolicy = (schedule: ReadonlyArray<number>): RetryPolicy => ({
  baseDelaySeconds: scheduled(schedule),
  jitterShare: 0.25,
  minSeconds: 0,
  maxSeconds: maxRetryDelaySeconds,
  otherStatuses: "permanent"
})

const shortError = (text: string) => text.slice(0, 200)

/**
 * What one attempt comes to: 2xx is delivered; 4xx other than 408 and 429 is permanent; 408,
 * 429, 5xx, timeouts and network failures retry after the schedule's next delay (`webhookRetryPolicy`)
 * until the schedule runs out. An address the delivery may not reach is permanent.
 */
export const attemptOutcome = (
  answer: Result.Result<WebhookAnswer, WebhookSendFailed>,
  context: AttemptContext
): DeliveryResult => {
  const at = isoAt(context.nowMs)
  const policy = webhookRetryPolicy(context.schedule)
  const retryOrGiveUp = (error: string, statusCode: number | undefined, retryAfter: number | undefined) => {
    const next = nextAttemptAt(policy, context, retryAfter)
    if (next === undefined)
      return { _tag: "GiveUp", status: "failed", at, error: shortError(error), statusCode } as const
    return { _tag: "Retry", nextAttemptAt: next, error: shortError(error), statusCode } as const
  }
  if (Result.isFailure(answer)) {
    const failure = answer.failure
    return failure.reason === "blocked_address"
      ? { _tag: "GiveUp", status: "failed", at, error: shortError(failure.message) }
      : retryOrGiveUp(failure.message, undefined, undefined)
  }
  const { status } = answer.success
  switch (statusVerdict(policy, status)) {
    case "delivered":
      return { _tag: "Delivered", at, statusCode: status }
    case "retry":
      return retryOrGiveUp(
        `The endpoint answered ${status}.`,
        status,
        retryAfterSeconds(answer.success.retryAfter, context.nowMs)
      )
    case "permanent":
      return { _tag: "GiveUp", status: "failed", at, error: `The endpoint answered ${status}.`, statusCode: status }
  }
}

/**
 * The headers of one attempt, signed afresh with its own timestamp: `X-Decisions-Signature`
 * (`v1=<hex HMAC-SHA256 of '<X-Decisions-Timestamp>.<raw body>'>`, keyed with the whole secret string)
 * and the Standard Webhooks trio (`webhook-id` is the delivery id, the receiver's dedupe key).
 */
export const signedHeaders = (input: {
  readonly secret: string
  readonly deliveryId: string
  readonly body: string
  readonly timestampSeconds: number
}): Record<string, string> => ({
  "content-type": "application/json",
  "user-agent": "hitl-platform-decisions-webhooks/1",
  "x-decisions-timestamp": String(input.timestampSeconds),
  "x-decisions-signature": sign({ secret: input.secret, timestamp: input.timestampSeconds, payload: input.body }),
  "webhook-id": input.deliveryId,
  "webhook-timestamp": String(input.timestampSeconds),
  "webhook-signature": signStandardWebhook({
    secret: input.secret,
    id: input.deliveryId,
    timestamp: input.timestampSeconds,
    body: input.body
  })
})
