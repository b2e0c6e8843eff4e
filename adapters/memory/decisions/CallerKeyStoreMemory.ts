import { Effect, Layer } from "effect"
import { CallerKeyStore, type ApiKey, type StoredCallerKey } from "../../../core/decisions/CallerKeyStore.ts"

const show = ({ organizationId: _org, hash: _hash, ...key }: StoredCallerKey): ApiKey => key

export const CallerKeyStoreMemory = Layer.sync(CallerKeyStore, () => {
  const rows = new Map<string, StoredCallerKey>()
  const owned = (organizationId: string, id: string) => {
    const row = rows.get(id)
    return row !== undefined && row.organizationId === organizationId ? row : undefined
  }
  return CallerKeyStore.of({
    create: (key) => Effect.sync(() => void rows.set(key.id, key)),
    list: (organizationId) =>
      Effect.sync(() =>
        [...rows.values()]
          .filter((k) => k.organizationId === organizationId)
          .sort((a, b) => (a.id < b.id ? 1 : -1))
          .map(show)
      ),
    findActive: (hash) =>
      Effect.sync(() => [...rows.values()].find((k) => k.hash === hash && k.revokedAt === undefined)),
    rotate: (organizationId, id, next) =>
      Effect.sync(() => {
        const row = owned(organizationId, id)
        if (row === undefined || row.revokedAt !== undefined) return undefined
        const rotated = { ...row, hash: next.hash, keyPrefix: next.keyPrefix }
        rows.set(id, rotated)
        return show(rotated)
      }),
    revoke: (organizationId, id, at) =>
      Effect.sync(() => {
        const row = owned(organizationId, id)
        if (row === undefined) return undefined
        const revoked = row.revokedAt === undefined ? { ...row, revokedAt: at } : row
        rows.set(id, revoked)
        return show(revoked)
      }),
    touch: (id, at) =>
      Effect.sync(() => {
        const row = rows.get(id)
        if (row !== undefined) rows.set(id, { ...row, lastUsedAt: at })
      })
  })
})
