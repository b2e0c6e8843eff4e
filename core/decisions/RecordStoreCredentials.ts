import { Context, Effect } from "effect"

/** An organization's record-store token, sealed (core/auth/SecretBox.ts); never shown again once set. */
export interface StoredRecordStoreCredentials {
  readonly organizationId: string
  readonly sealedToken: string
  readonly updatedBy: string
  readonly updatedAt: string
}

/** One set of record-store credentials per organization; `put` replaces the previous one, `remove` forgets it. */
export class RecordStoreCredentials extends Context.Service<
  RecordStoreCredentials,
  {
    readonly put: (credentials: StoredRecordStoreCredentials) => Effect.Effect<void>
    readonly get: (organizationId: string) => Effect.Effect<StoredRecordStoreCredentials | undefined>
    /** Answers whether there was a set to remove. */
    readonly remove: (organizationId: string) => Effect.Effect<boolean>
  }
>()("core/decisions/RecordStoreCredentials") {}
