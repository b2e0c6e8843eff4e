import { Clock, Effect, Exit, Schema } from "effect"
import { createHash } from "node:crypto"
import { ValidationError } from "../kernel/Errors.ts"
import { Idempotency } from "../kernel/Limits.ts"
import { IdempotencyStore, type KeptResponse } from "./IdempotencyStore.ts"

/** The key was already used by this caller for a different request. */
export class IdempotencyConflict extends Schema.TaggedError<IdempotencyConflict>()("IdempotencyConflict", {}) {}

/** The first request with this key is still running and did not finish while we waited. */
export class IdempotencyInProgress extends Schema.TaggedError<IdempotencyInProgress>()("IdempotencyInProgress", {}) {}

const visibleAscii = /^[\x21-\x7e]+$/

/** An `Idempotency-Key` is 1 to 255 visible ASCII characters. */
export const validateIdempotencyKey = (key: string): Effect.Effect<string, ValidationError> =>
  key.length >= 1 && key.length <= Idempotency.keyMax && visibleAscii.test(key)
    ? Effect.succeed(key)
    : Effect.fail(
        new ValidationError({
          message: "The Idempotency-Key header is not valid.",
          details: [
            { field: "Idempotency-Key", message: `must be 1 to ${Idempotency.keyMax} visible ASCII characters` }
          ]
        })
      )

/** What makes two requests "the same request" for one key. */
export interface RequestIdentity {
  readonly caller: string
  readonly method: string
  readonly path: string
  readonly body: string | Uint8Array
}

const encoder = new TextEncoder()

/**
 * Hex SHA-256 over the fields, each preceded by its byte length (4 bytes, big-endian), so no two different
 * requests share an encoding ("ab" + "c" and "a" + "bc" differ).
 */
export const fingerprintRequest = (request: RequestIdentity): string => {
  const hash = createHash("sha256")
  for (const field of ["hitl/idempotency/v1", request.caller, request.method, request.path, request.body]) {
    const bytes = typeof field === "string" ? encoder.encode(field) : field
    const length = new Uint8Array(4)
    new DataView(length.buffer).setUint32(0, bytes.byteLength)
    hash.update(length)
    hash.update(bytes)
  }
  return hash.digest("hex")
}

export interface IdempotentRequest {
  /** Whose keys: the authenticated caller. The same key under two scopes names two requests. */
  readonly scope: string
  readonly key: string
  /** `fingerprintRequest` of the request. */
  readonly fingerprint: string
}

export interface RunIdempotentOptions {
  /** How long a finished response is replayed. Default 24 h (document 1: "kept at least 24 hours"). */
  readonly retentionSeconds?: number | undefined
  /**
   * How long a running claim holds the key. A process that dies mid-request frees its keys after this;
   * a request still running past it could run again, so it is far longer than any mutation. Default 5 min.
   */
  readonly leaseSeconds?: number | undefined
  /** How long a repeat waits for the first request to finish before answering IdempotencyInProgress. */
  readonly waitTimeoutMs?: number | undefined
  /** How often a waiting repeat asks the store again. */
  readonly pollIntervalMs?: number | undefined
}

/**
 * Runs a mutation at most once per (scope, key):
 *
 * - the first request claims the key, runs `run` and keeps its response for `retentionSeconds`;
 * - a repeat with the same fingerprint gets the kept response, byte for byte; while the first is still
 *   running it waits (asking the store again every `pollIntervalMs`) up to `waitTimeoutMs`, then fails
 *   with `IdempotencyInProgress`;
 * - a repeat with another fingerprint fails with `IdempotencyConflict`.
 *
 * `run` must produce the final response, error responses included: the HTTP adapter turns its domain
 * errors into a response inside `run`, so a 4xx is kept and replayed like a 2xx. Only a run that does not
 * produce a response is not kept: a typed failure of `run`, a defect or an interruption releases the key
 * (a retry runs again) and is propagated unchanged.
 */
export const runIdempotent = Effect.fn("runIdempotent")(function* <E, R>(
  request: IdempotentRequest,
  run: Effect.Effect<KeptResponse, E, R>,
  options: RunIdempotentOptions = {}
): Effect.fn.Return<KeptResponse, E | IdempotencyConflict | IdempotencyInProgress, R | IdempotencyStore> {
  const store = yield* IdempotencyStore
  const retentionMs = (options.retentionSeconds ?? Idempotency.retentionSeconds) * 1000
  const leaseMs = (options.leaseSeconds ?? 300) * 1000
  const waitTimeoutMs = options.waitTimeoutMs ?? 10_000
  const pollIntervalMs = options.pollIntervalMs ?? 25
  const { scope, key } = request

  // Claiming and arranging the release happen uninterruptibly: a claimed key must never be left running.
  const attempt = Effect.uninterruptibleMask((restore) =>
    Effect.gen(function* () {
      const nowMs = yield* Clock.currentTimeMillis
      const claim = yield* store.claim({ ...request, nowMs, expiresAtMs: nowMs + Math.min(leaseMs, retentionMs) })
      if (claim._tag !== "Claimed") return claim
      const response = yield* restore(run).pipe(
        Effect.onExit((exit) =>
          Exit.isSuccess(exit)
            ? Effect.flatMap(Clock.currentTimeMillis, (doneMs) =>
                store.complete({ scope, key, response: exit.value, expiresAtMs: doneMs + retentionMs })
              )
            : store.release({ scope, key })
        )
      )
      return { _tag: "Ran", response } as const
    })
  )

  const deadline = (yield* Clock.currentTimeMillis) + waitTimeoutMs
  while (true) {
    const outcome = yield* attempt
    switch (outcome._tag) {
      case "Ran":
        return outcome.response
      case "Replay":
        return outcome.response
      case "Mismatch":
        return yield* new IdempotencyConflict()
      case "Running": {
        const remaining = deadline - (yield* Clock.currentTimeMillis)
        if (remaining <= 0) return yield* new IdempotencyInProgress()
        yield* Effect.sleep(Math.min(pollIntervalMs, remaining))
      }
    }
  }
})
