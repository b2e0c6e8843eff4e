import { Effect, Layer } from "effect"
import { CallerKeyStore, type ApiKey, type StoredCallerKey } from "../../../core/decisions/CallerKeyStore.ts"
import { laterUse, lastUseOf } from "../../../core/kernel/LastUse.ts"

const show = ({ organizationId: _org, hash: _hash, ...key }: StoredCallerKey): ApiKey => key

/** Keys by id, and by hash for the lookup every request makes. Uses are recorded at once, to the minute. */
export const CallerKeyStoreMemory = Layer.sync(CallerKeyStore, () => {
  const rows = new Map<string, StoredCallerKey>()
  const idByHash = new Map<string, string>()
  const put = (key: StoredCallerKey) => {
    const previous = rows.get(key.id)
    if (previous !== undefined && previous.hash !== key.hash) idByHash.delete(previous.hash)
    rows.set(key.id, key)
    idByHash.set(key.hash, key.id)
  }
  const owned = (organizationId: string, id: string) => {
    const row = rows.get(id)
    return row !== undefined && row.organizationId === organizationId ? row : undefined
  }
  return CallerKeyStore.of({
    create: (key) => Effect.sync(() => put(key)),
    list: (organizationId) =>
      Effect.sync(() =>
        [...rows.values()]
          .filter((k) => k.organizationId === organizationId)
          .sort((a, b) => (a.id < b.id ? 1 : -1))
          .map(show)
      ),
    findActive: (hash) =>
      Effect.sync(() => {
        const id = idByHash.get(hash)
        const row = id === undefined ? undefined : rows.get(id)
        return row !== undefined && row.hash === hash && row.revokedAt === undefined ? row : undefined
      }),
    rotate: (organizationId, id, next) =>
      Effect.sync(() => {
        const row = owned(organizationId, id)
        if (row === undefined || row.revokedAt !== undefined) return undefined
        const rotated = { ...row, hash: next.hash, keyPrefix: next.keyPrefix }
        put(rotated)
        return show(rotated)
      }),
    revoke: (organizationId, id, at) =>
      Effect.sync(() => {
        const row = owned(organizationId, id)
        if (row === undefined) return undefined
        const revoked = row.revokedAt === undefined ? { ...row, revokedAt: at } : row
        put(revoked)
        return show(revoked)
      }),
    touch: (id, at) =>
      Effect.sync(() => {
        const row = rows.get(id)
        if (row !== undefined) put({ ...row, lastUsedAt: laterUse(row.lastUsedAt, lastUseOf(at)) })
      }),
    flushUses: Effect.void
  })
})
