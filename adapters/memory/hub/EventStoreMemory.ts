import { Effect, Layer } from "effect"
import { EventStore, type StoredEvent } from "../../../core/hub/EventStore.ts"

const keyOf = (service: string, id: string) => JSON.stringify([service, id])
const byC = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** The event store in memory: each method is one synchronous step, so insert-if-absent is atomic. */
export const EventStoreMemory = Layer.sync(EventStore, () => {
  const rows = new Map<string, { event: StoredEvent; leaseUntil: string | null }>()
  return EventStore.of({
    insert: (event) =>
      Effect.sync(() => {
        const key = keyOf(event.service, event.id)
        if (rows.has(key)) return "duplicate" as const
        const { processed, claimedUntil, ...stored } = structuredClone(event)
        const claimed = processed !== true && claimedUntil !== undefined
        rows.set(key, {
          event:
            processed === true
              ? { ...stored, status: "processed", attempts: 0, processedAt: stored.receivedAt }
              : { ...stored, status: "accepted", attempts: claimed ? 1 : 0, processedAt: null },
          leaseUntil: claimed ? claimedUntil : null
        })
        return "new" as const
      }),
    claim: (nowIso, leaseUntilIso, limit) =>
      Effect.sync(() => {
        const now = Date.parse(nowIso)
        const due = [...rows.values()]
          .filter(
            (row) => row.event.status === "accepted" && (row.leaseUntil === null || Date.parse(row.leaseUntil) <= now)
          )
          .sort((a, b) => byC(a.event.receivedAt, b.event.receivedAt) || byC(a.event.id, b.event.id))
          .slice(0, limit)
        return due.map((row) => {
          row.leaseUntil = leaseUntilIso
          row.event = { ...row.event, attempts: row.event.attempts + 1 }
          return structuredClone(row.event)
        })
      }),
    finish: (service, id, status, atIso) =>
      Effect.sync(() => {
        const row = rows.get(keyOf(service, id))
        if (row !== undefined) row.event = { ...row.event, status, processedAt: atIso }
      }),
    release: (keys) =>
      Effect.sync(() => {
        for (const { service, id } of keys) {
          const row = rows.get(keyOf(service, id))
          if (row === undefined || row.event.status !== "accepted" || row.event.attempts !== 1) continue
          row.leaseUntil = null
          row.event = { ...row.event, attempts: 0 }
        }
      }),
    finishAll: (keys, status, atIso) =>
      Effect.sync(() => {
        for (const { service, id } of keys) {
          const row = rows.get(keyOf(service, id))
          if (row !== undefined) row.event = { ...row.event, status, processedAt: atIso }
        }
      }),
    find: (service, id) => Effect.sync(() => structuredClone(rows.get(keyOf(service, id))?.event)),
    list: (service, limit) =>
      Effect.sync(() =>
        [...rows.values()]
          .map((row) => row.event)
          .filter((event) => event.service === service)
          .sort((a, b) => byC(b.receivedAt, a.receivedAt) || byC(b.id, a.id))
          .slice(0, limit)
          .map((event) => structuredClone(event))
      )
  })
})
