import { Effect, Layer } from "effect"
import { NotificationStore, type Notification } from "../../../core/hub/NotificationStore.ts"

const byC = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

export const NotificationStoreMemory = Layer.sync(NotificationStore, () => {
  const rows = new Map<string, Notification>()
  return NotificationStore.of({
    file: (notification) =>
      Effect.sync(() => {
        const key = JSON.stringify([notification.service, notification.eventId])
        const existing = rows.get(key)
        if (existing !== undefined) return { notification: { ...existing }, filed: false }
        rows.set(key, { ...notification })
        return { notification: { ...notification }, filed: true }
      }),
    feed: (userId, limit) =>
      Effect.sync(() =>
        [...rows.values()]
          .filter((n) => n.userId === userId)
          .sort((a, b) => byC(b.createdAt, a.createdAt) || byC(b.id, a.id))
          .slice(0, limit)
          .map((n) => ({ ...n }))
      )
  })
})
