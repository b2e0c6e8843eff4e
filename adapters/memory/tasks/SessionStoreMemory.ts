import { Effect, Layer } from "effect"
import { SessionStore, type Session } from "../../../core/tasks/SessionStore.ts"

export const SessionStoreMemory = Layer.sync(SessionStore, () => {
  const rows = new Map<string, Session>()
  return SessionStore.of({
    create: (session) => Effect.sync(() => void rows.set(session.hash, session)),
    find: (hash, nowIso) =>
      Effect.sync(() => {
        const session = rows.get(hash)
        return session !== undefined && session.expiresAt > nowIso ? session : undefined
      }),
    remove: (hash) => Effect.sync(() => void rows.delete(hash))
  })
})
