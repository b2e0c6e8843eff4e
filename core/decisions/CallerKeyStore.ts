import { Context, Effect, Schema } from "effect"

/** Document 2, "ApiKey": what a list shows. The key itself is never stored, only its hash. */
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
 * stops working at once.
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
  }
>()("core/decisions/CallerKeyStore") {}
