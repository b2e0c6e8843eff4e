import { Context, Effect, Layer } from "effect"
import {
  DeliveryStore,
  deliveryId,
  type ClaimedDelivery,
  type Delivery,
  type DeliveryOutcome
} from "../../../core/hub/Deliveries.ts"
import {
  NotificationStore,
  settled,
  settledReason,
  settles,
  type Notification
} from "../../../core/hub/NotificationStore.ts"

const byC = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
const newestFirst = (a: Notification, b: Notification) => byC(b.createdAt, a.createdAt) || byC(b.id, a.id)
const byAge = (a: Delivery, b: Delivery) => byC(a.createdAt, b.createdAt) || byC(a.id, b.id)

/**
 * The feed and the channels' outbox in memory (tests, embedding, demos): one layer, because a claimed
 * delivery carries its notification. Each operation is one synchronous step, so claims never overlap.
 */
export const NotificationStoreMemory = Layer.effectContext(
  Effect.sync(() => {
    const notifications = new Map<string, Notification>()
    const byEvent = new Map<string, string>()
    const deliveries = new Map<string, Delivery & { leaseUntil: string | null }>()

    const claimedOf = (row: Delivery & { leaseUntil: string | null }, leaseUntilIso: string): ClaimedDelivery => {
      row.leaseUntil = leaseUntilIso
      const claimed: Delivery = { ...row, status: "sending", attempts: row.attempts + 1 }
      Object.assign(row, claimed)
      const { leaseUntil: _lease, ...delivery } = row
      return { delivery, notification: { ...notifications.get(row.notificationId)! } }
    }
    const pending = () => [...deliveries.values()].filter((d) => d.status === "pending").sort(byAge)
    const visible = (n: Notification, hidden: ReadonlyArray<string>) => !hidden.includes(n.service)

    const fileOne = (notification: Notification) => {
      const key = JSON.stringify([notification.service, notification.eventId])
      const existing = byEvent.get(key)
      if (existing !== undefined) return { notification: { ...notifications.get(existing)! }, filed: false }
      byEvent.set(key, notification.id)
      notifications.set(notification.id, { ...notification })
      return { notification: { ...notification }, filed: true }
    }

    const store = NotificationStore.of({
      file: (notification) => Effect.sync(() => fileOne(notification)),
      fileAll: (list) =>
        Effect.sync(() => list.map(fileOne).flatMap(({ notification, filed }) => (filed ? [notification] : []))),
      feed: (userId, limit) =>
        Effect.sync(() =>
          [...notifications.values()]
            .filter((n) => n.userId === userId)
            .sort(newestFirst)
            .slice(0, limit)
            .map((n) => ({ ...n }))
        ),
      page: (userId, query) =>
        Effect.sync(() =>
          [...notifications.values()]
            .filter((n) => n.userId === userId && visible(n, query.hiddenServices))
            .filter(
              (n) =>
                query.after === undefined ||
                newestFirst(n, { ...n, createdAt: query.after.createdAt, id: query.after.id }) > 0
            )
            .sort(newestFirst)
            .slice(0, query.limit)
            .map((n) => ({ ...n }))
        ),
      unreadCount: (userId, hidden) =>
        Effect.sync(
          () =>
            [...notifications.values()].filter((n) => n.userId === userId && n.readAt === null && visible(n, hidden))
              .length
        ),
      markRead: (userId, id, atIso) =>
        Effect.sync(() => {
          const n = notifications.get(id)
          if (n === undefined || n.userId !== userId) return undefined
          const read = { ...n, readAt: n.readAt ?? atIso }
          notifications.set(id, read)
          return { ...read }
        }),
      markAllRead: (userId, atIso) =>
        Effect.sync(() => {
          let count = 0
          for (const n of notifications.values()) {
            if (n.userId === userId && n.readAt === null) {
              notifications.set(n.id, { ...n, readAt: atIso })
              count++
            }
          }
          return count
        }),
      settle: (settlements) =>
        Effect.sync(() => {
          let count = 0
          for (const n of notifications.values()) {
            const applying = settlements.filter((settlement) => settles(settlement, n))
            if (applying.length === 0) continue
            notifications.set(
              n.id,
              applying.reduce((current, settlement) => settled(settlement, current), n)
            )
            for (const row of deliveries.values()) {
              if (row.notificationId === n.id && row.status === "pending") {
                Object.assign(row, { status: "cancelled", lastError: settledReason })
              }
            }
            count++
          }
          return count
        })
    })

    const settleRow = (row: Delivery & { leaseUntil: string | null }, outcome: DeliveryOutcome) => {
      if (row.status !== "sending" && row.status !== "interrupted") return
      row.leaseUntil = null
      if (outcome.status === "sent") Object.assign(row, { status: "sent", sentAt: outcome.atIso })
      else if (outcome.status === "pending") {
        Object.assign(row, { status: "pending", nextAttemptAt: outcome.nextAttemptAt, lastError: outcome.error })
      } else Object.assign(row, { status: outcome.status, lastError: outcome.error })
    }

    const outbox = DeliveryStore.of({
      enqueue: (list) =>
        Effect.sync(() => {
          for (const d of list) {
            const id = deliveryId(d)
            if (deliveries.has(id)) continue
            deliveries.set(id, {
              ...d,
              id,
              status: "pending",
              attempts: 0,
              lastError: null,
              sentAt: null,
              leaseUntil: null
            })
          }
        }),
      claimEmail: (nowIso, leaseUntilIso, maxUsers) =>
        Effect.sync(() => {
          const emails = pending().filter((d) => d.channel === "email")
          const due = emails
            .filter((d) => d.nextAttemptAt <= nowIso)
            .sort((a, b) => byC(a.nextAttemptAt, b.nextAttemptAt) || byC(a.userId, b.userId))
          const users: Array<string> = []
          for (const d of due) if (!users.includes(d.userId)) users.push(d.userId)
          return users
            .slice(0, maxUsers)
            .map((userId) => emails.filter((d) => d.userId === userId).map((d) => claimedOf(d, leaseUntilIso)))
            .sort((a, b) => byAge(a[0]!.delivery, b[0]!.delivery))
        }),
      claim: (channel, nowIso, leaseUntilIso, limit) =>
        Effect.sync(() =>
          pending()
            .filter((d) => d.channel === channel && d.nextAttemptAt <= nowIso)
            .sort((a, b) => byC(a.nextAttemptAt, b.nextAttemptAt) || byC(a.id, b.id))
            .slice(0, limit)
            .map((d) => claimedOf(d, leaseUntilIso))
            .sort((a, b) => byAge(a.delivery, b.delivery))
        ),
      settle: (ids, outcome) =>
        Effect.sync(() => {
          for (const id of ids) {
            const row = deliveries.get(id)
            if (row !== undefined) settleRow(row, outcome)
          }
        }),
      interruptStale: (nowIso) =>
        Effect.sync(() => {
          let count = 0
          for (const row of deliveries.values()) {
            if (row.status === "sending" && row.leaseUntil !== null && row.leaseUntil <= nowIso) {
              Object.assign(row, {
                status: "interrupted",
                leaseUntil: null,
                lastError: "the server stopped while sending; not sent again"
              })
              count++
            }
          }
          return count
        }),
      attemptsOf: (channel, notificationIds) =>
        Effect.sync(() => {
          const wanted = new Set(notificationIds)
          const sums = new Map<string, number>()
          for (const row of deliveries.values()) {
            if (row.channel !== channel || !wanted.has(row.notificationId)) continue
            sums.set(row.notificationId, (sums.get(row.notificationId) ?? 0) + row.attempts)
          }
          return sums
        }),
      cancelTarget: (channel, target, reason) =>
        Effect.sync(() => {
          for (const row of deliveries.values()) {
            if (row.channel === channel && row.target === target && row.status === "pending") {
              Object.assign(row, { status: "cancelled", lastError: reason })
            }
          }
        }),
      forUser: (userId, limit) =>
        Effect.sync(() =>
          [...deliveries.values()]
            .filter((d) => d.userId === userId)
            .sort((a, b) => byAge(b, a))
            .slice(0, limit)
            .map(({ leaseUntil: _lease, ...d }) => d)
        )
    })

    return Context.mergeAll(NotificationStore.context(store), DeliveryStore.context(outbox))
  })
)
