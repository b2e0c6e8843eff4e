import { Context, Effect } from "effect"

/** The response kept for a key: replayed byte for byte. */
export interface KeptResponse {
  readonly status: number
  readonly contentType: string
  readonly body: string
}

/** What `claim` found for (scope, key). */
export type Claim =
  /** No live record: the caller now owns the key and must `complete` or `release` it. */
  | { readonly _tag: "Claimed" }
  /** The same request finished before: answer with its kept response. */
  | { readonly _tag: "Replay"; readonly response: KeptResponse }
  /** The key was used with a different request (fingerprint). */
  | { readonly _tag: "Mismatch" }
  /** The same request is still running elsewhere. */
  | { readonly _tag: "Running" }

/**
 * Idempotency records, per scope (the authenticated caller). `claim` is atomic: of many concurrent
 * claims of one fresh key exactly one is `Claimed`. A record older than its expiry counts as absent: a
 * running record expires at the end of its lease (so a crash mid-request frees the key soon), a finished
 * one at the end of its retention.
 * Infrastructure failures are defects: the HTTP adapter answers them with a safe 5xx.
 */
export class IdempotencyStore extends Context.Service<
  IdempotencyStore,
  {
    readonly claim: (input: {
      readonly scope: string
      readonly key: string
      readonly fingerprint: string
      readonly nowMs: number
      readonly expiresAtMs: number
    }) => Effect.Effect<Claim>
    /** Keeps the response until `expiresAtMs` (the retention), replacing the running lease's expiry. */
    readonly complete: (input: {
      readonly scope: string
      readonly key: string
      readonly response: KeptResponse
      readonly expiresAtMs: number
    }) => Effect.Effect<void>
    /** The handler did not produce a response (defect, interruption): free the key for a retry. */
    readonly release: (input: { readonly scope: string; readonly key: string }) => Effect.Effect<void>
    /** Deletes records whose expiry is before `nowMs`; answers how many went. */
    readonly purgeExpired: (nowMs: number) => Effect.Effect<number>
  }
>()("core/idempotency/IdempotencyStore") {}
