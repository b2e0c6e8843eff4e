import { Effect, Layer } from "effect"
import { McpSessionStore, type McpSession } from "../../../core/decisions/McpSessionStore.ts"

export const McpSessionStoreMemory = Layer.sync(McpSessionStore, () => {
  const sessions = new Map<string, McpSession>()
  return McpSessionStore.of({
    open: (session, maxPerKey) =>
      Effect.sync(() => {
        sessions.set(session.idHash, session)
        const others = [...sessions.values()]
          .filter((s) => s.keyId === session.keyId && s.idHash !== session.idHash)
          .sort((a, b) => b.lastSeenAt - a.lastSeenAt || (a.idHash < b.idHash ? -1 : 1))
        for (const old of others.slice(Math.max(maxPerKey - 1, 0))) sessions.delete(old.idHash)
      }),
    use: (idHash, keyId, idleSince, now) =>
      Effect.sync(() => {
        const session = sessions.get(idHash)
        if (session === undefined || session.keyId !== keyId || session.lastSeenAt <= idleSince) return undefined
        const used = { ...session, lastSeenAt: Math.max(session.lastSeenAt, now) }
        sessions.set(idHash, used)
        return used
      }),
    end: (idHash, keyId) =>
      Effect.sync(() => {
        const session = sessions.get(idHash)
        if (session === undefined || session.keyId !== keyId) return false
        return sessions.delete(idHash)
      }),
    purgeIdle: (idleSince) =>
      Effect.sync(() => {
        for (const [idHash, session] of sessions) if (session.lastSeenAt <= idleSince) sessions.delete(idHash)
      })
  })
})
