import { Effect, Layer } from "effect"
import { MailOutbox } from "../../../core/hub/MailOutbox.ts"

interface Row {
  readonly id: string
  sealed: string | null
  nextAttemptAt: number
  attempts: number
  leaseUntil: number | null
  done: boolean
}

export const MailOutboxMemory = Layer.sync(MailOutbox, () => {
  const rows = new Map<string, Row>()
  const finish = (id: string) => {
    const row = rows.get(id)
    if (row === undefined) return
    row.sealed = null
    row.leaseUntil = null
    row.attempts++
    row.done = true
  }
  return MailOutbox.of({
    enqueue: (mail) =>
      Effect.sync(() => {
        rows.set(mail.id, {
          id: mail.id,
          sealed: mail.sealed,
          nextAttemptAt: Date.parse(mail.createdAt),
          attempts: 0,
          leaseUntil: null,
          done: false
        })
      }),
    claim: (now, leaseUntil, max) =>
      Effect.sync(() => {
        const at = Date.parse(now)
        const due = [...rows.values()]
          .filter((r) => !r.done && r.nextAttemptAt <= at && (r.leaseUntil === null || r.leaseUntil <= at))
          .sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
          .slice(0, max)
        for (const row of due) row.leaseUntil = Date.parse(leaseUntil)
        return due.map((row) => ({ id: row.id, sealed: row.sealed!, attempts: row.attempts }))
      }),
    markSent: (id) => Effect.sync(() => finish(id)),
    markFailed: (id) => Effect.sync(() => finish(id)),
    retryAt: (id, nextAttemptAt) =>
      Effect.sync(() => {
        const row = rows.get(id)
        if (row === undefined) return
        row.nextAttemptAt = Date.parse(nextAttemptAt)
        row.leaseUntil = null
        row.attempts++
      }),
    pendingCount: () => Effect.sync(() => [...rows.values()].filter((r) => !r.done).length)
  })
})
