import { Effect, Layer } from "effect"
import { EmailQueue, type EmailBatch } from "../../../core/hub/EmailQueue.ts"
import type { Notification } from "../../../core/hub/NotificationStore.ts"

const byC = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
const oldestFirst = (a: Notification, b: Notification) => byC(a.createdAt, b.createdAt) || byC(a.id, b.id)

export const EmailQueueMemory = Layer.sync(EmailQueue, () => {
  const rows = new Map<string, { item: Notification; leaseUntil: string | null; sentAt: string | null }>()
  const pendingOf = (nowMs: number | undefined) =>
    [...rows.values()].filter(
      (row) =>
        row.sentAt === null && (nowMs === undefined || row.leaseUntil === null || Date.parse(row.leaseUntil) <= nowMs)
    )
  return EmailQueue.of({
    enqueue: (notification) =>
      Effect.sync(() => {
        if (rows.has(notification.id)) return false
        rows.set(notification.id, { item: { ...notification }, leaseUntil: null, sentAt: null })
        return true
      }),
    claim: (nowIso, leaseUntilIso, maxUsers) =>
      Effect.sync(() => {
        const due = pendingOf(Date.parse(nowIso)).sort((a, b) => oldestFirst(a.item, b.item))
        const users: Array<string> = []
        for (const row of due) if (!users.includes(row.item.userId)) users.push(row.item.userId)
        return users.slice(0, maxUsers).map((userId): EmailBatch => {
          const mine = due.filter((row) => row.item.userId === userId)
          for (const row of mine) row.leaseUntil = leaseUntilIso
          return { userId, email: mine[0]!.item.email, items: mine.map((row) => ({ ...row.item })) }
        })
      }),
    markSent: (ids, atIso) =>
      Effect.sync(() => {
        for (const id of ids) {
          const row = rows.get(id)
          if (row !== undefined) row.sentAt = atIso
        }
      }),
    pending: (userId) =>
      Effect.sync(() =>
        pendingOf(undefined)
          .filter((row) => row.item.userId === userId)
          .map((row) => ({ ...row.item }))
          .sort(oldestFirst)
      )
  })
})
