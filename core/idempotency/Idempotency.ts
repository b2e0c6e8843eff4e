import { Clock, Effect, Schema } from "effect"
import { createHash } from "node:crypto"
import { open, seal } from "../auth/SecretBox.ts"
import { ValidationError } from "../kernel/Errors.ts"
import { headerIssue } from "../kernel/FieldIssue.ts"
import { Transactions } from "../kernel/Transactions.ts"
import { Idempotency } from "../kernel/Limits.ts"
import { IdempotencyStore, type KeptResponse } from "./IdempotencyStore.ts"

/** The key was already used by this caller for a different request. */
export class IdempotencyConflict extends Schema.TaggedError<IdempotencyConflict>()("IdempotencyConflict", {}) {}

const visibleAscii = /^[\x21-\x7e]+$/

/** An `Idempotency-Key` is 1 to 255 visible ASCII characters. */
export const validateIdempotencyKey = (key: string): Effect.Effect<string, ValidationError> =>
  key.length >= 1 && key.length <= Idempotency.keyMax && visibleAscii.test(key)
    ? Effect.succeed(key)
    : Effect.fail(
        new ValidationError({
          message: "The Idempotency-Key header is not valid.",
          details: [headerIssue("Idempotency-Key", `must be 1 to ${Idempotency.keyMax} visible ASCII characters`)]
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
  /** How long a finished response is replayed. Default 24 h (kept at least a day). */
  readonly retentionSeconds?: number | undefined
  /**
   * The service's secrets key: kept responses are sealed with it (core/auth/SecretBox.ts), since some carry a
   * secret shown once (a new API key, a webhook signing secret). Without it a request with a key is refused
   * with `IdempotencyUnavailable`: a kept response is never stored in the clear.
   */
  readonly secretsKey: string | undefined
  /**
   * The mutation may share its transaction with others of the same moment (`Transactions.shared`): only for one
   * that creates new rows and opens no nested unit, such as a decision's create.
   */
  readonly shared?: boolean | undefined
}

/** Kept responses cannot be sealed: the service has no secrets key. */
export class IdempotencyUnavailable extends Schema.TaggedError<IdempotencyUnavailable>()(
  "IdempotencyUnavailable",
  {}
) {}

/**
 * Runs a mutation at most once per (scope, key), as ONE unit of work (core/kernel/Transactions.ts): the
 * claim of the key, everything `run` writes (the change and its outbox rows) and the kept response commit
 * together, or none of it does. So after a crash at any instant a retry either runs for the first time
 * (nothing had committed) or gets the kept response; it never runs twice and a key is never left stuck.
 *
 * - the first request claims the key, runs `run` and keeps its response for `retentionSeconds`;
 * - a repeat with the same fingerprint gets the kept response, byte for byte; while the first is still
 *   running, the repeat's claim waits for it (the store's claim blocks on the unit that holds the key) and
 *   then replays its response, or runs itself if the first was undone;
 * - a repeat with another fingerprint fails with `IdempotencyConflict`.
 *
 * `run` must produce the final response, error responses included: the HTTP adapter turns its domain
 * errors into a response inside `run`, so a 4xx is kept and replayed like a 2xx. A typed failure of `run`,
 * a defect or an interruption undoes the unit (so the key is free again) and is propagated unchanged.
 */
export const runIdempotent = Effect.fnUntraced(function* <E, R>(
  request: IdempotentRequest,
  run: Effect.Effect<KeptResponse, E, R>,
  options: RunIdempotentOptions
): Effect.fn.Return<
  KeptResponse,
  E | IdempotencyConflict | IdempotencyUnavailable,
  R | IdempotencyStore | Transactions
> {
  const secretsKey = options.secretsKey
  if (secretsKey === undefined) return yield* new IdempotencyUnavailable()
  const store = yield* IdempotencyStore
  const transactions = yield* Transactions
  const retentionMs = (options.retentionSeconds ?? Idempotency.retentionSeconds) * 1000
  const { scope, key } = request

  const unit = Effect.gen(function* () {
    const nowMs = yield* Clock.currentTimeMillis
    const claim = yield* store.claim({ ...request, nowMs, expiresAtMs: nowMs + retentionMs })
    switch (claim._tag) {
      case "Mismatch":
        return yield* new IdempotencyConflict()
      case "Replay": {
        const body = open(secretsKey, claim.response.body)
        // Only a changed secrets key (or a tampered row) makes a kept response unreadable: our failure.
        if (body === undefined) return yield* Effect.die(new Error("a kept response could not be opened"))
        return { ...claim.response, body }
      }
      case "Claimed": {
        const response = yield* run
        const doneMs = yield* Clock.currentTimeMillis
        yield* store.complete({
          scope,
          key,
          response: { ...response, body: seal(secretsKey, response.body) },
          expiresAtMs: doneMs + retentionMs
        })
        return response
      }
    }
  })
  // A unit that did not commit leaves nothing behind on a transactional store; `release` frees the claim
  // where a store cannot undo it (memory).
  const once = options.shared === true ? transactions.shared(`${scope}\n${key}`, unit) : transactions.atomically(unit)
  return yield* once.pipe(Effect.onError(() => store.release({ scope, key })))
})
