import { isoAt } from "./Timestamp.ts"

/**
 * How an outbox retries what it could not deliver: one pure policy every outbox worker applies to an
 * attempt's answer (the webhook outbox, the producer outbox, the hub's notification and mail outboxes). A policy says how long to wait before the
 * retry that follows a number of failed attempts, how much jitter spreads retries refused together, the
 * bounds of a wait, and whether an answer is permanent.
 */
export interface RetryPolicy {
  /**
   * The wait, in seconds, before the retry that follows `attemptsBefore` failed attempts, before jitter and
   * bounds; undefined when no retry is left (the delivery is given up).
   */
  readonly baseDelaySeconds: (attemptsBefore: number) => number | undefined
  /** Up to this share of a wait is added, by the attempt's jitter in [0, 1). */
  readonly jitterShare: number
  /** No wait is shorter, whatever the schedule or the receiver's `Retry-After`. */
  readonly minSeconds: number
  /** No wait is longer, whatever the schedule or the receiver's `Retry-After`. */
  readonly maxSeconds: number
  /** An answer that is neither 2xx, 4xx nor 5xx (1xx, 3xx): retried, or permanent. */
  readonly otherStatuses: "retry" | "permanent"
}

/** No outbox waits longer than this between two attempts: twelve hours. */
export const maxRetryWaitSeconds = 12 * 60 * 60

/** Waits taken from a list: the nth retry waits `seconds[n]`; once the list is spent, nothing is retried. */
export const scheduled =
  (seconds: ReadonlyArray<number>) =>
  (attemptsBefore: number): number | undefined =>
    seconds[attemptsBefore]

/** Waits that double from `firstSeconds` at each failed attempt, without end (the policy's bound caps them). */
export const doubling =
  (firstSeconds: number) =>
  (attemptsBefore: number): number =>
    firstSeconds * 2 ** Math.max(0, attemptsBefore)

/**
 * What an answer's status means: 2xx is delivered; 408 (timeout) and 429 (over quota) and every 5xx are
 * worth retrying; every other 4xx is permanent; the rest as the policy says.
 */
export const statusVerdict = (policy: RetryPolicy, status: number): "delivered" | "retry" | "permanent" => {
  if (status >= 200 && status < 300) return "delivered"
  if (status === 408 || status === 429 || status >= 500) return "retry"
  if (status >= 400 && status < 500) return "permanent"
  return policy.otherStatuses
}

/**
 * Seconds before the retry that follows `attemptsBefore` failed attempts: the base wait plus up to
 * `jitterShare` of it (`jitter` in [0, 1)), never less than `retryAfter` (the receiver's `Retry-After`) or
 * the minimum, never more than the maximum. Undefined when no retry is left.
 */
export const retryDelaySeconds = (
  policy: RetryPolicy,
  attemptsBefore: number,
  jitter: number,
  retryAfter?: number | undefined
): number | undefined => {
  const base = policy.baseDelaySeconds(attemptsBefore)
  if (base === undefined) return undefined
  const jittered = base * (1 + policy.jitterShare * Math.min(Math.max(jitter, 0), 0.999))
  return Math.min(Math.max(jittered, retryAfter ?? 0, policy.minSeconds), policy.maxSeconds)
}

/** When the retry is due (ISO time), or undefined when no retry is left. */
export const nextAttemptAt = (
  policy: RetryPolicy,
  context: { readonly attemptsBefore: number; readonly nowMs: number; readonly jitter: number },
  retryAfter?: number | undefined
): string | undefined => {
  const seconds = retryDelaySeconds(policy, context.attemptsBefore, context.jitter, retryAfter)
  return seconds === undefined ? undefined : isoAt(context.nowMs + Math.round(seconds * 1000))
}

/** A `Retry-After` header: delta seconds or an HTTP date; anything else is ignored. */
export const retryAfterSeconds = (header: string | undefined, nowMs: number): number | undefined => {
  if (header === undefined) return undefined
  const trimmed = header.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed)
  const at = Date.parse(trimmed)
  return Number.isFinite(at) ? Math.max(0, (at - nowMs) / 1000) : undefined
}
