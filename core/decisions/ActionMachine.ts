import { Result } from "effect"
import { Decisions as L } from "../kernel/Limits.ts"
import { safeMessage } from "../kernel/SafeMessage.ts"
import { doubling, nextAttemptAt, type RetryPolicy } from "../kernel/RetryPolicy.ts"
import { isoAt } from "../kernel/Timestamp.ts"

/**
 * Record actions, one per template option that carries one. The
 * statuses' transitions are "not shown" in the document; ours, as a pure and total machine:
 *
 *   armed ──resolved with its option──▶ queued ──succeeded──▶ succeeded
 *   armed ──resolved otherwise────────▶ not_triggered
 *   queued | retrying ──failed, retryable, attempts left──▶ retrying (nextAttemptAt)
 *   queued | retrying ──failed otherwise──▶ dead_lettered ──retry (manual)──▶ queued
 *   queued | retrying ──no credentials──▶ waiting_for_setup ──credentials set──▶ queued
 *
 * Every other (status, event) pair is refused and changes nothing.
 */
export const ActionStatus = [
  "armed",
  "not_triggered",
  "queued",
  "waiting_for_setup",
  "retrying",
  "succeeded",
  "dead_lettered"
] as const
export type ActionStatus = (typeof ActionStatus)[number]

export interface ActionState {
  readonly id: string
  readonly optionId: string
  readonly type: "record_update"
  readonly summary: string
  readonly status: ActionStatus
  readonly attempts: number
  readonly lastError?: string
  readonly triggeredAt?: string
  readonly completedAt?: string
  readonly nextAttemptAt?: string
}

export type ActionEvent =
  /** The decision resolved; `appliedOptionId` is the chosen (or default-on-expiry) option, if any. */
  | { readonly _tag: "DecisionResolved"; readonly appliedOptionId: string | undefined }
  | { readonly _tag: "Succeeded" }
  | { readonly _tag: "Failed"; readonly error: string; readonly retryable: boolean }
  | { readonly _tag: "NoCredentials" }
  | { readonly _tag: "CredentialsSet" }
  | { readonly _tag: "Retry" }

/**
 * The record actions' retries, on the one policy every outbox applies (core/kernel/RetryPolicy.ts): after
 * the nth failed attempt, `firstSeconds` doubled n - 1 times, capped at `maxSeconds`, plus up to a quarter of
 * it (the attempt's jitter), until `maxAttempts` attempts have failed: then the action is dead-lettered.
 */
export const actionRetryPolicy = (options: {
  readonly maxAttempts: number
  readonly firstSeconds: number
  readonly maxSeconds: number
}): RetryPolicy => ({
  baseDelaySeconds: (attemptsBefore) =>
    attemptsBefore + 1 < options.maxAttempts ? doubling(options.firstSeconds)(attemptsBefore) : undefined,
  jitterShare: 0.25,
  minSeconds: 0,
  maxSeconds: options.maxSeconds,
  otherStatuses: "retry"
})

/** Six attempts, from 30 s up to an hour between two. */
export const defaultRetryPolicy: RetryPolicy = actionRetryPolicy({ maxAttempts: 6, firstSeconds: 30, maxSeconds: 3600 })

export interface Refused {
  readonly _tag: "Refused"
  readonly status: ActionStatus
  readonly event: ActionEvent["_tag"]
}

/** The error as the decision shows it: at most 200 characters, user-safe. */
export const actionError = (error: string): string =>
  safeMessage("UPSTREAM_ERROR", error).slice(0, L.actionLastErrorMax)

const without = <S extends ActionState>(state: S, ...keys: ReadonlyArray<keyof ActionState>): S => {
  const next = { ...state } as Record<string, unknown>
  for (const key of keys) delete next[key]
  return next as S
}

/**
 * One step. `jitter` in [0, 1) spreads retries (it comes from the edge, like `now`; the policy says by how
 * much). Fields the machine does not know are kept as they are.
 */
export const stepAction = <S extends ActionState>(
  state: S,
  event: ActionEvent,
  nowMs: number,
  jitter: number,
  policy: RetryPolicy = defaultRetryPolicy
): Result.Result<S, Refused> => {
  const refuse = () => Result.fail<Refused>({ _tag: "Refused", status: state.status, event: event._tag })
  const now = isoAt(nowMs)
  switch (event._tag) {
    case "DecisionResolved":
      if (state.status !== "armed") return refuse()
      return Result.succeed(
        event.appliedOptionId === state.optionId
          ? { ...state, status: "queued", triggeredAt: now }
          : { ...state, status: "not_triggered" }
      )
    case "Succeeded":
      if (state.status !== "queued" && state.status !== "retrying") return refuse()
      return Result.succeed({
        ...without(state, "nextAttemptAt"),
        status: "succeeded",
        attempts: state.attempts + 1,
        completedAt: now
      })
    case "Failed": {
      if (state.status !== "queued" && state.status !== "retrying") return refuse()
      const attempts = state.attempts + 1
      const lastError = actionError(event.error)
      const next = event.retryable
        ? nextAttemptAt(policy, { attemptsBefore: state.attempts, nowMs, jitter })
        : undefined
      if (next !== undefined)
        return Result.succeed({ ...state, status: "retrying", attempts, lastError, nextAttemptAt: next })
      return Result.succeed({ ...without(state, "nextAttemptAt"), status: "dead_lettered", attempts, lastError })
    }
    case "NoCredentials":
      if (state.status !== "queued" && state.status !== "retrying") return refuse()
      return Result.succeed({ ...without(state, "nextAttemptAt"), status: "waiting_for_setup" })
    case "CredentialsSet":
      if (state.status !== "waiting_for_setup") return refuse()
      return Result.succeed({ ...state, status: "queued" })
    case "Retry":
      if (state.status !== "dead_lettered") return refuse()
      return Result.succeed({ ...without(state, "nextAttemptAt"), status: "queued" })
  }
}

/** An action is the worker's to perform now: queued, or retrying and due. */
export const isRunnable = (state: ActionState, nowMs: number): boolean =>
  state.status === "queued" ||
  (state.status === "retrying" && state.nextAttemptAt !== undefined && Date.parse(state.nextAttemptAt) <= nowMs)
