import { Context, type Effect } from "effect"

/** A user's API key as a list shows it; the secret itself is never stored, only its hash. */
export interface TaskApiKey {
  readonly id: string
  readonly name: string
  readonly keyPrefix: string
  readonly createdAt: string
  readonly lastUsedAt: string | null
}

export interface StoredTaskApiKey extends TaskApiKey {
  /** The collaborator id (`usr…`) of the user the key acts for. */
  readonly userId: string
  readonly hash: string
  readonly revokedAt: string | null
}

/**
 * The keys users generate under /api/settings/api-keys. The service's own data, kept apart from the
 * upstream record store. Infrastructure failures are defects.
 *
 * A revoked key is refused at once, on every server instance. `touch` notes a use without waiting for a
 * write: the last use is kept to the minute (core/kernel/LastUse.ts) and recorded in the background, in
 * batches; `flushUses` records what is noted now. A last use never moves back. `findActive` may answer a key
 * with an older `lastUsedAt` than the list shows.
 */
export class TaskApiKeyStore extends Context.Service<
  TaskApiKeyStore,
  {
    readonly create: (key: StoredTaskApiKey) => Effect.Effect<void>
    /** The user's keys that are not revoked, newest first. */
    readonly list: (userId: string) => Effect.Effect<ReadonlyArray<TaskApiKey>>
    readonly findActive: (hash: string) => Effect.Effect<StoredTaskApiKey | undefined>
    /** True when the user's active key was revoked by this call. */
    readonly revoke: (userId: string, id: string, at: string) => Effect.Effect<boolean>
    readonly touch: (id: string, at: string) => Effect.Effect<void>
    readonly flushUses: Effect.Effect<void>
  }
>()("core/tasks/TaskApiKeyStore") {}
