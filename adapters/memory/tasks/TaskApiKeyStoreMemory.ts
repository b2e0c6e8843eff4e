import { Effect, Layer } from "effect"
import { TaskApiKeyStore, type StoredTaskApiKey, type TaskApiKey } from "../../../core/tasks/ApiKeyStore.ts"
import { makeApiKeyIndex } from "../ApiKeyIndex.ts"

const show = ({ userId: _user, hash: _hash, revokedAt: _revoked, ...key }: StoredTaskApiKey): TaskApiKey => key

/** Keys as the in-memory API-key stores keep them (ApiKeyIndex.ts), per user. */
export const TaskApiKeyStoreMemory = Layer.sync(TaskApiKeyStore, () => {
  const keys = makeApiKeyIndex<StoredTaskApiKey>((key) => key.revokedAt === null)
  return TaskApiKeyStore.of({
    create: (key) => Effect.sync(() => keys.put(key)),
    list: (userId) =>
      Effect.sync(() =>
        keys
          .newestFirst()
          .filter((k) => k.userId === userId && k.revokedAt === null)
          .map(show)
      ),
    findActive: keys.findActive,
    revoke: (userId, id, at) =>
      Effect.sync(() => {
        const row = keys.get(id)
        if (row === undefined || row.userId !== userId || row.revokedAt !== null) return false
        keys.put({ ...row, revokedAt: at })
        return true
      }),
    touch: keys.touch,
    flushUses: Effect.void
  })
})
