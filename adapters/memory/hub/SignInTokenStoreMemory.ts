import { Effect, Layer } from "effect"
import {
  ExternalViewerStore,
  SignInTokenStore,
  type ExternalViewer,
  type SignInToken
} from "../../../core/hub/SignInTokenStore.ts"

export const SignInTokenStoreMemory = Layer.sync(SignInTokenStore, () => {
  const rows = new Map<string, { token: SignInToken; usedAt: string | null }>()
  return SignInTokenStore.of({
    insert: (token) =>
      Effect.sync(() => {
        rows.set(token.tokenHash, { token: { ...token }, usedAt: null })
      }),
    find: (tokenHash, now) =>
      Effect.sync(() => {
        const row = rows.get(tokenHash)
        if (row === undefined || row.usedAt !== null || Date.parse(row.token.expiresAt) <= Date.parse(now)) {
          return undefined
        }
        return { ...row.token }
      }),
    // Units of work take turns in memory: nothing to hold.
    countIssuedSince: (userId, purpose, since) =>
      Effect.sync(
        () =>
          [...rows.values()].filter(
            (row) =>
              row.token.userId === userId &&
              row.token.purpose === purpose &&
              Date.parse(row.token.createdAt) >= Date.parse(since)
          ).length
      ),
    redeem: (tokenHash, now) =>
      Effect.sync(() => {
        const row = rows.get(tokenHash)
        if (row === undefined || row.usedAt !== null || Date.parse(row.token.expiresAt) <= Date.parse(now)) {
          return undefined
        }
        row.usedAt = now
        return { ...row.token }
      }),
    revokeUnused: (userId, purpose, now) =>
      Effect.sync(() => {
        let revoked = 0
        for (const row of rows.values()) {
          if (row.token.userId === userId && row.token.purpose === purpose && row.usedAt === null) {
            row.usedAt = now
            revoked++
          }
        }
        return revoked
      }),
    purge: (before) =>
      Effect.sync(() => {
        let removed = 0
        for (const [key, row] of rows) {
          if (Date.parse(row.token.expiresAt) < Date.parse(before)) {
            rows.delete(key)
            removed++
          }
        }
        return removed
      })
  })
})

export const ExternalViewerStoreMemory = Layer.sync(ExternalViewerStore, () => {
  const rows = new Map<string, ExternalViewer>()
  return ExternalViewerStore.of({
    add: (viewer) =>
      Effect.sync(() => {
        if (rows.has(viewer.userId)) return false
        rows.set(viewer.userId, { ...viewer })
        return true
      }),
    find: (userId) => Effect.sync(() => (rows.has(userId) ? { ...rows.get(userId)! } : undefined))
  })
})
