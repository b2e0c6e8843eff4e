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

/**
 * Idempotency records, per scope (the authenticated caller), written inside the mutation's unit of work
 * (core/kernel/Transactions.ts). `claim` is atomic: of many concurrent claims of one fresh key exactly one
 * is `Claimed`, and a claim made while another unit holds the key waits until that unit ends: then it is a
 * `Replay` (the other committed) or `Claimed` (the other was undone). A claimed record that was never
 * completed (left by a unit that could not undo it) counts as absent, and so does a record past its expiry.
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
    /**
     * Keeps the response until `expiresAtMs` (the retention), replacing the running lease's expiry: the last
     * write of a unit, which may be written only at the unit's end (core/kernel/Transactions.ts).
     */
    readonly complete: (input: {
      readonly scope: string
      readonly key: string
      readonly response: KeptResponse
      readonly expiresAtMs: number
    }) => Effect.Effect<void>
    /** The unit was undone: free a claim the store could not undo itself (a no-op on a transactional store). */
    readonly release: (input: { readonly scope: string; readonly key: string }) => Effect.Effect<void>
    /** Deletes records whose expiry is before `nowMs`; answers how many went. */
    readonly purgeExpired: (nowMs: number) => Effect.Effect<number>
  }
>()("core/idempotency/IdempotencyStore") {}
