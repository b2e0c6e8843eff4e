import { Context, Effect, Schema } from "effect"

/** What a list shows of a caller key. The key itself is never stored, only its hash. */
export const ApiKey = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  keyPrefix: Schema.String,
  createdBy: Schema.String,
  createdAt: Schema.String,
  lastUsedAt: Schema.optionalKey(Schema.String),
  revokedAt: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "ApiKey" })
export type ApiKey = typeof ApiKey.Type

export interface StoredCallerKey extends ApiKey {
  readonly organizationId: string
  readonly hash: string
}

/**
 * Caller keys (`dcd_…`), per organization. `findActive` looks a key up by the hash of what was
 * presented and answers only keys that are not revoked; rotation replaces the hash, so the old key
 * stops working at once, on every server instance, as does revocation.
 *
 * `touch` notes a use without waiting for a write: the last use is kept to the minute (core/kernel/LastUse.ts)
 * and recorded in the background, in batches; `flushUses` records what is noted now. A last use never moves
 * back. `findActive` may answer a key with an older `lastUsedAt` than the list shows.
 */
export class CallerKeyStore extends Context.Service<
  CallerKeyStore,
  {
    readonly create: (key: StoredCallerKey) => Effect.Effect<void>
    readonly list: (organizationId: string) => Effect.Effect<ReadonlyArray<ApiKey>>
    readonly findActive: (hash: string) => Effect.Effect<StoredCallerKey | undefined>
    readonly rotate: (
      organizationId: string,
      id: string,
      next: { readonly hash: string; readonly keyPrefix: string }
    ) => Effect.Effect<ApiKey | undefined>
    readonly revoke: (organizationId: string, id: string, at: string) => Effect.Effect<ApiKey | undefined>
    readonly touch: (id: string, at: string) => Effect.Effect<void>
    readonly flushUses: Effect.Effect<void>
  }
>()("core/decisions/CallerKeyStore") {}
