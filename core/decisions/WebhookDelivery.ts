import { Result } from "effect"
import { sign } from "../auth/Signature.ts"
import { signStandardWebhook } from "../auth/StandardWebhook.ts"
import { isoAt } from "../kernel/Timestamp.ts"
import type { DecisionStatus } from "./Decision.ts"
import type { DeliveryResult } from "./WebhookOutbox.ts"
import type { WebhookAnswer, WebhookSendFailed } from "./WebhookSender.ts"

/** The moves that send a webhook. */
export const webhookStatuses: ReadonlyArray<DecisionStatus> = ["needs_info", "resolved", "expired", "cancelled"]

/** Seconds before each retry: from 60 s up to 12 h, the last step repeated no more. */
export const defaultRetrySchedule: ReadonlyArray<number> = [60, 300, 1800, 7200, 21600, 43200]

export const maxRetryDelaySeconds = 12 * 60 * 60

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

/** A `Retry-After` header: delta seconds or an HTTP date; anything else is ignored. */
export const retryAfterSeconds = (header: string | undefined, nowMs: number): number | undefined => {
  if (header === undefined) return undefined
  const trimmed = header.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed)
  const at = Date.parse(trimmed)
  return Number.isFinite(at) ? Math.max(0, (at - nowMs) / 1000) : undefined
}

export interface AttemptContext {
  /** Attempts made before this one. */
  readonly attemptsBefore: number
  readonly schedule: ReadonlyArray<number>
  readonly nowMs: number
  /** In [0, 1), from the edge: spreads retries over [delay, 1.25 × delay). */
  readonly jitter: number
}

const shortError = (text: string) => text.slice(0, 200)

/**
 * What one attempt comes to: 2xx is delivered; 4xx other than 408 and 429 is permanent; 408,
 * 429, 5xx, timeouts and network failures retry after the schedule's next delay (jittered, never less than
 * `Retry-After`, never over 12 hours) until the schedule runs out. An address the delivery may not reach
 * is permanent.
 */
export const attemptOutcome = (
  answer: Result.Result<WebhookAnswer, WebhookSendFailed>,
  context: AttemptContext
): DeliveryResult => {
  const at = isoAt(context.nowMs)
  const retryOrGiveUp = (error: string, statusCode: number | undefined, retryAfter: number | undefined) => {
    const delay = context.schedule[context.attemptsBefore]
    if (delay === undefined)
      return { _tag: "GiveUp", status: "failed", at, error: shortError(error), statusCode } as const
    const jittered = delay * (1 + 0.25 * Math.min(Math.max(context.jitter, 0), 0.999))
    const seconds = Math.min(Math.max(jittered, retryAfter ?? 0), maxRetryDelaySeconds)
    return {
      _tag: "Retry",
      nextAttemptAt: isoAt(context.nowMs + Math.round(seconds * 1000)),
      error: shortError(error),
      statusCode
    } as const
  }
  if (Result.isFailure(answer)) {
    const failure = answer.failure
    return failure.reason === "blocked_address"
      ? { _tag: "GiveUp", status: "failed", at, error: shortError(failure.message) }
      : retryOrGiveUp(failure.message, undefined, undefined)
  }
  const { status } = answer.success
  if (status >= 200 && status < 300) return { _tag: "Delivered", at, statusCode: status }
  if (status === 408 || status === 429 || status >= 500) {
    return retryOrGiveUp(
      `The endpoint answered ${status}.`,
      status,
      retryAfterSeconds(answer.success.retryAfter, context.nowMs)
    )
  }
  return { _tag: "GiveUp", status: "failed", at, error: `The endpoint answered ${status}.`, statusCode: status }
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
