import { Clock, Effect, Latch, Layer } from "effect"
import {
  ProducerOutbox,
  type OutboxEntry,
  type ProducerEvent,
  type RelayOutcome
} from "../../core/events/ProducerOutbox.ts"
import { makeHandOver } from "../../core/kernel/HandOver.ts"
import { epochMs } from "../../core/kernel/Timestamp.ts"

/** The outcome written over an entry: the attempt counted, the last error replaced (or cleared). */
const applyOutcome = (entry: OutboxEntry, outcome: RelayOutcome): OutboxEntry => {
  const { lastError: _error, lastStatusCode: _code, nextAttemptAt: _next, ...rest } = entry
  const attempts = entry.attempts + 1
  const code = outcome.statusCode === undefined ? {} : { lastStatusCode: outcome.statusCode }
  switch (outcome._tag) {
    case "Delivered":
      return { ...rest, ...code, status: "delivered", attempts, completedAt: outcome.at }
    case "Retry":
      return { ...rest, ...code, attempts, nextAttemptAt: outcome.nextAttemptAt, lastError: outcome.error }
    case "Failed":
      return { ...rest, ...code, status: "failed", attempts, completedAt: outcome.at, lastError: outcome.error }
  }
}

const byId = (a: OutboxEntry, b: OutboxEntry) => (a.event.id < b.event.id ? -1 : a.event.id > b.event.id ? 1 : 0)

/**
 * The ProducerOutbox port in memory (one process, so a claim is atomic by construction). An enqueue wakes the
 * relay at once: memory writes are never undone, so there is no commit to wait for.
 */
export const ProducerOutboxMemory = Layer.sync(ProducerOutbox, () => {
  const entries = new Map<string, OutboxEntry>()
  const enqueued = Latch.makeUnsafe(false)
  // Given back at a shutdown: due at once again.
  const handOver = makeHandOver<OutboxEntry>({
    maxWaiting: 1000,
    release: (given) =>
      Effect.sync(() => {
        for (const { event } of given) {
          const entry = entries.get(event.id)
          if (entry === undefined || entry.status !== "pending" || entry.attempts !== 0) continue
          const { nextAttemptAt: _held, ...due } = entry
          entries.set(event.id, due)
        }
        enqueued.openUnsafe()
      })
  })
  const copy = (entry: OutboxEntry): OutboxEntry => structuredClone(entry)
  const isDue = (entry: OutboxEntry, nowMs: number) =>
    entry.status === "pending" && (entry.nextAttemptAt === undefined || epochMs(entry.nextAttemptAt) <= nowMs)
  const recordOne = (id: string, outcome: RelayOutcome) => {
    const entry = entries.get(id)
    if (entry !== undefined && entry.status === "pending") entries.set(id, applyOutcome(entry, outcome))
  }
  return ProducerOutbox.of({
    enqueue: (event: ProducerEvent) =>
      Effect.flatMap(Clock.currentTimeMillis, (nowMs) =>
        Effect.sync(() => {
          if (entries.has(event.id)) return undefined
          const leaseUntil = handOver.leaseFor(nowMs)
          const entry: OutboxEntry = {
            event: structuredClone(event),
            status: "pending",
            attempts: 0,
            ...(leaseUntil === undefined ? {} : { nextAttemptAt: leaseUntil })
          }
          entries.set(event.id, entry)
          enqueued.openUnsafe()
          return entry
        })
      ).pipe(
        Effect.flatMap((entry) =>
          entry === undefined || entry.nextAttemptAt === undefined ? Effect.void : handOver.give(copy(entry))
        )
      ),
    openHandOver: handOver.open,
    takeHandedOver: handOver.take,
    awaitEnqueued: (millis) =>
      enqueued.await.pipe(Effect.timeoutOption(millis), Effect.andThen(enqueued.close), Effect.asVoid),
    pending: (limit) =>
      Effect.sync(() =>
        [...entries.values()]
          .filter((e) => e.status === "pending")
          .sort(byId)
          .slice(0, limit)
          .map((e) => structuredClone(e.event))
      ),
    claimDue: (nowIso, leaseUntilIso, limit) =>
      Effect.sync(() => {
        const now = epochMs(nowIso)
        return [...entries.values()]
          .filter((e) => isDue(e, now))
          .sort(byId)
          .slice(0, limit)
          .map((e) => {
            const claimed = { ...e, nextAttemptAt: leaseUntilIso }
            entries.set(e.event.id, claimed)
            return copy(claimed)
          })
      }),
    record: (id, outcome) => Effect.sync(() => recordOne(id, outcome)),
    recordAll: (attempts) =>
      Effect.sync(() => {
        for (const { id, outcome } of attempts) recordOne(id, outcome)
      }),
    get: (id) =>
      Effect.sync(() => {
        const entry = entries.get(id)
        return entry === undefined ? undefined : copy(entry)
      })
  })
})
