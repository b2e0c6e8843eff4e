import { Effect, Layer } from "effect"
import { SessionStore, type SessionRecord } from "../../../core/hub/Sessions.ts"

export const SessionStoreMemory = Layer.sync(SessionStore, () => {
  const rows = new Map<string, SessionRecord>()
  return SessionStore.of({
    create: (session) =>
      Effect.sync(() => {
        rows.set(session.idHash, { ...session })
      }),
    find: (idHash) => Effect.sync(() => (rows.has(idHash) ? { ...rows.get(idHash)! } : undefined)),
    touch: (idHash, lastSeenAt) =>
      Effect.sync(() => {
        const row = rows.get(idHash)
        if (row !== undefined && Date.parse(row.lastSeenAt) < Date.parse(lastSeenAt)) {
          rows.set(idHash, { ...row, lastSeenAt })
        }
      }),
    remove: (idHash) => Effect.sync(() => rows.delete(idHash)),
    purge: (idleBefore, now) =>
      Effect.sync(() => {
        let removed = 0
        for (const [key, row] of rows) {
          if (Date.parse(row.lastSeenAt) < Date.parse(idleBefore) || Date.parse(row.expiresAt) <= Date.parse(now)) {
            rows.delete(key)
            removed++
          }
        }
        return removed
      })
  })
})
