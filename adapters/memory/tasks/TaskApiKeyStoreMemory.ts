import { Effect, Layer } from "effect"
import { TaskApiKeyStore, type StoredTaskApiKey, type TaskApiKey } from "../../../core/tasks/ApiKeyStore.ts"

const show = ({ userId: _user, hash: _hash, revokedAt: _revoked, ...key }: StoredTaskApiKey): TaskApiKey => key

export const TaskApiKeyStoreMemory = Layer.sync(TaskApiKeyStore, () => {
  const rows = new Map<string, StoredTaskApiKey>()
  return TaskApiKeyStore.of({
    create: (key) => Effect.sync(() => void rows.set(key.id, key)),
    list: (userId) =>
      Effect.sync(() =>
        [...rows.values()]
          .filter((k) => k.userId === userId && k.revokedAt === null)
          .sort((a, b) => (a.id < b.id ? 1 : -1))
          .map(show)
      ),
    findActive: (hash) => Effect.sync(() => [...rows.values()].find((k) => k.hash === hash && k.revokedAt === null)),
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
        if (row !== undefined) rows.set(id, { ...row, lastUsedAt: at })
      })
  })
})
