import { Effect } from "effect"
import { laterUse, lastUseOf } from "../../core/kernel/LastUse.ts"

interface IndexedKey {
  readonly id: string
  readonly hash: string
  readonly lastUsedAt?: string | null | undefined
}

/**
 * What the in-memory API-key stores share: keys by id, and by hash for the lookup every request makes;
 * `isActive` says whether a key still opens (not revoked). Uses are recorded at once, to the minute.
 */
export const makeApiKeyIndex = <K extends IndexedKey>(isActive: (key: K) => boolean) => {
  const rows = new Map<string, K>()
  const idByHash = new Map<string, string>()
  /** Stores `key`, replacing the one with its id (and that key's hash, when it changed). */
  const put = (key: K) => {
    const previous = rows.get(key.id)
    if (previous !== undefined && previous.hash !== key.hash) idByHash.delete(previous.hash)
    rows.set(key.id, key)
    idByHash.set(key.hash, key.id)
  }
  return {
    put,
    get: (id: string) => rows.get(id),
    /** Every key, newest first (ids order as time). */
    newestFirst: () => [...rows.values()].sort((a, b) => (a.id < b.id ? 1 : -1)),
    findActive: (hash: string) =>
      Effect.sync(() => {
        const id = idByHash.get(hash)
        const row = id === undefined ? undefined : rows.get(id)
        return row !== undefined && row.hash === hash && isActive(row) ? row : undefined
      }),
    touch: (id: string, at: string) =>
      Effect.sync(() => {
        const row = rows.get(id)
        if (row !== undefined) put({ ...row, lastUsedAt: laterUse(row.lastUsedAt, lastUseOf(at)) })
      })
  }
}
