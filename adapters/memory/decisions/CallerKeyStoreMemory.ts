import { Effect, Layer } from "effect"
import { CallerKeyStore, type ApiKey, type StoredCallerKey } from "../../../core/decisions/CallerKeyStore.ts"
import { makeApiKeyIndex } from "../ApiKeyIndex.ts"

const show = ({ organizationId: _org, hash: _hash, ...key }: StoredCallerKey): ApiKey => key

/** Keys as the in-memory API-key stores keep them (ApiKeyIndex.ts), per organization. */
export const CallerKeyStoreMemory = Layer.sync(CallerKeyStore, () => {
  const keys = makeApiKeyIndex<StoredCallerKey>((key) => key.revokedAt === undefined)
  const owned = (organizationId: string, id: string) => {
    const row = keys.get(id)
    return row !== undefined && row.organizationId === organizationId ? row : undefined
  }
  return CallerKeyStore.of({
    create: (key) => Effect.sync(() => keys.put(key)),
    list: (organizationId) =>
      Effect.sync(() =>
        keys
          .newestFirst()
          .filter((k) => k.organizationId === organizationId)
          .map(show)
      ),
    findActive: keys.findActive,
    rotate: (organizationId, id, next) =>
      Effect.sync(() => {
        const row = owned(organizationId, id)
        if (row === undefined || row.revokedAt !== undefined) return undefined
        const rotated = { ...row, hash: next.hash, keyPrefix: next.keyPrefix }
        keys.put(rotated)
        return show(rotated)
      }),
    revoke: (organizationId, id, at) =>
      Effect.sync(() => {
        const row = owned(organizationId, id)
        if (row === undefined) return undefined
        const revoked = row.revokedAt === undefined ? { ...row, revokedAt: at } : row
        keys.put(revoked)
        return show(revoked)
      }),
    touch: keys.touch,
    flushUses: Effect.void
  })
})
