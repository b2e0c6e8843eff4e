import { Effect, Layer } from "effect"
import { laterUse, lastUseOf } from "../../../core/kernel/LastUse.ts"
import { TaskApiKeyStore, type StoredTaskApiKey, type TaskApiKey } from "../../../core/tasks/ApiKeyStore.ts"

const show = ({ userId: _user, hash: _hash, revokedAt: _revoked, ...key }: StoredTaskApiKey): TaskApiKey => key

/** Keys by id, and by hash for the lookup every request makes. Uses are recorded at once, to the minute. */
export const TaskApiKeyStoreMemory = Layer.sync(TaskApiKeyStore, () => {
  const rows = new Map<string, StoredTaskApiKey>()
  const idByHash = new Map<string, string>()
  return TaskApiKeyStore.of({
    create: (key) =>
      Effect.sync(() => {
        rows.set(key.id, key)
        idByHash.set(key.hash, key.id)
      }),
    list: (userId) =>
      Effect.sync(() =>
        [...rows.values()]
          .filter((k) => k.userId === userId && k.revokedAt === null)
          .sort((a, b) => (a.id < b.id ? 1 : -1))
          .map(show)
      ),
    findActive: (hash) =>
      Effect.sync(() => {
        const id = idByHash.get(hash)
        const row = id === undefined ? undefined : rows.get(id)
        return row !== undefined && row.hash === hash && row.revokedAt === null ? row : undefined
      }),
    revoke: (userId, id, at) =>
      Effect.sync(() => {
        const row = rows.get(id)
        if (row === undefined || row.userId !== userId || row.revokedAt !== null) return false
        rows.set(id, { ...row, revokedAt: at })
        return true
      }),
    touch: (id, at) =>
      Effect.sync(() => {
        const row = rows.get(id)
        if (row !== undefined) rows.set(id, { ...row, lastUsedAt: laterUse(row.lastUsedAt, lastUseOf(at)) })
      }),
    flushUses: Effect.void
  })
})
