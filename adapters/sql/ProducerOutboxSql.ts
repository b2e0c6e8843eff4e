import { PgClient } from "@effect/sql-pg"
import { Clock, Effect, Latch, Layer, Option, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { SqlClient, SqlSchema } from "effect/sql"
import {
  ProducerOutbox,
  type OutboxEntry,
  type ProducerEvent,
  type RecordedAttempt,
  type RelayOutcome
} from "../../core/events/ProducerOutbox.ts"
import { makeHandOver } from "../../core/kernel/HandOver.ts"
import { Transactions } from "../../core/kernel/Transactions.ts"
import { Database } from "./Database.ts"
import { leaseClaims } from "./LeaseClaims.ts"
import { wakeOnNotify } from "./NotifyWakeups.ts"
import { TransactionsSql } from "./TransactionsSql.ts"
import { writeBehind } from "./units/HeldWrites.ts"

const EventRow = Schema.Struct({ event: Schema.Record(Schema.String, Schema.Unknown) })

const EntryRow = Schema.Struct({
  event: Schema.Record(Schema.String, Schema.Unknown),
  attempts: Schema.Number,
  next_attempt_at: Schema.NullOr(Schema.Date),
  delivered_at: Schema.NullOr(Schema.Date),
  failed_at: Schema.NullOr(Schema.Date),
  last_error: Schema.NullOr(Schema.String),
  last_status_code: Schema.NullOr(Schema.Number)
})

// Events are written by `enqueue` alone, from a ProducerEvent, so the stored JSON is one.
const toEvent = (json: Readonly<Record<string, unknown>>): ProducerEvent => json as unknown as ProducerEvent

const toEntry = (row: typeof EntryRow.Type): OutboxEntry => {
  const completedAt = row.delivered_at ?? row.failed_at
  return {
    event: toEvent(row.event),
    status: row.delivered_at !== null ? "delivered" : row.failed_at !== null ? "failed" : "pending",
    attempts: row.attempts,
    ...(row.next_attempt_at === null ? {} : { nextAttemptAt: row.next_attempt_at.toISOString() }),
    ...(row.last_error === null ? {} : { lastError: row.last_error }),
    ...(row.last_status_code === null ? {} : { lastStatusCode: row.last_status_code }),
    ...(completedAt === null ? {} : { completedAt: completedAt.toISOString() })
  }
}

/** Where a service keeps its outbox: the task inbox's `tasks.outbox`, the decisions service's `decisions.event_outbox`. */
export interface ProducerOutboxTable {
  readonly schema: string
  readonly table: string
}

/** The channel an outbox's enqueues are announced on, `<schema>_<table>_enqueued`. */
export const enqueuedChannel = (where: ProducerOutboxTable) => `${where.schema}_${where.table}_enqueued`

/**
 * The ProducerOutbox port over one service's outbox table (adapters/sql/decisions/0008_events.ts has
 * its shape); ids are ULIDs, so id order is time order. A claim is one UPDATE over rows locked with SKIP
 * LOCKED, so relays on several servers never claim the same event. An outcome only changes a pending row.
 * Enqueued inside a unit of work, the row commits with the change that implies it. SQL failures are defects.
 *
 * Wake-ups: a new row wakes this instance's relay once its unit has committed (`Transactions.afterCommit`),
 * and on a Postgres server a NOTIFY sent in the same transaction (so Postgres delivers it exactly at commit,
 * and never for a unit undone) wakes the relays of the other instances, each LISTENing on a connection of
 * its own. On the embedded database the in-process wake-up is all there is: it belongs to one process, and a
 * LISTEN would hold its only connection. An event handed over to this instance's relay (`openHandOver`) is
 * stored held until its lease's end, with no NOTIFY: no other relay may send it before then.
 */
export const ProducerOutboxSql = (
  where: ProducerOutboxTable
): Layer.Layer<ProducerOutbox, never, SqlClient.SqlClient | Database | PgClient.PgClient> =>
  Layer.effect(
    ProducerOutbox,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const transactions = yield* Transactions
      const database = yield* Database
      const outbox = sql`${sql(where.schema)}.${sql(where.table)}`
      const channel = enqueuedChannel(where)
      const enqueued = yield* Latch.make(false)
      // An instance wakes its own relay after commit, so it ignores its own notices when they come back.
      const instance = randomUUID()
      // Given back at a shutdown: due at once again, and the relays of the other instances told.
      const handOver = makeHandOver<OutboxEntry>({
        maxWaiting: 1000,
        release: (entries) => {
          const released = sql`UPDATE ${outbox} SET next_attempt_at = NULL
            WHERE id IN (SELECT jsonb_array_elements_text(${JSON.stringify(entries.map((e) => e.event.id))}::jsonb))
              AND delivered_at IS NULL AND failed_at IS NULL AND attempts = 0
            RETURNING id`
          return Effect.orDie(
            database.kind === "postgres"
              ? sql`WITH r AS (${released}) SELECT pg_notify(${channel}, ${instance}) FROM r LIMIT 1`.pipe(
                  Effect.asVoid
                )
              : Effect.asVoid(released)
          )
        }
      })
      if (database.kind === "postgres") {
        // Whatever was enqueued while not listening is found by the pass a (re)started LISTEN wakes.
        yield* wakeOnNotify({
          pg: yield* PgClient.PgClient,
          channel,
          instance,
          wake: enqueued.open,
          who: "the event relay"
        })
      }
      const pendingRows = SqlSchema.findAll({
        Request: Schema.Int,
        Result: EventRow,
        execute: (limit) => sql`
        SELECT event FROM ${outbox} WHERE delivered_at IS NULL AND failed_at IS NULL ORDER BY id LIMIT ${limit}`
      })
      const claimRows = leaseClaims(sql, EntryRow, ({ now, leaseUntil }) => ({
        table: outbox,
        set: sql`next_attempt_at = ${leaseUntil}::timestamptz`,
        due: sql`delivered_at IS NULL AND failed_at IS NULL
          AND (next_attempt_at IS NULL OR next_attempt_at <= ${now}::timestamptz)`,
        order: sql`id`,
        returning: sql`*`
      }))
      const getRow = SqlSchema.findOneOption({
        Request: Schema.String,
        Result: EntryRow,
        execute: (id) => sql`SELECT * FROM ${outbox} WHERE id = ${id}`
      })

      const record = (id: string, outcome: RelayOutcome) => {
        const pending = sql`id = ${id} AND delivered_at IS NULL AND failed_at IS NULL`
        const code = outcome.statusCode ?? null
        switch (outcome._tag) {
          case "Delivered":
            return sql`UPDATE ${outbox} SET delivered_at = ${outcome.at}::timestamptz, attempts = attempts + 1,
            next_attempt_at = NULL, last_error = NULL, last_status_code = ${code}
            WHERE ${pending}`
          case "Retry":
            return sql`UPDATE ${outbox} SET attempts = attempts + 1,
            next_attempt_at = ${outcome.nextAttemptAt}::timestamptz, last_error = ${outcome.error},
            last_status_code = ${code}
            WHERE ${pending}`
          case "Failed":
            return sql`UPDATE ${outbox} SET failed_at = ${outcome.at}::timestamptz, attempts = attempts + 1,
            next_attempt_at = NULL, last_error = ${outcome.error}, last_status_code = ${code}
            WHERE ${pending}`
        }
      }

      return ProducerOutbox.of({
        // Untraced: every mutation enqueues, and its write goes out with the unit's last statement anyway.
        enqueue: Effect.fnUntraced(function* (event: ProducerEvent) {
          // Held for this instance's relay when it takes hand-overs: no other relay may claim it meanwhile.
          const leaseUntil = handOver.leaseFor(yield* Clock.currentTimeMillis)
          const insert = sql`
          INSERT INTO ${outbox} (id, event, next_attempt_at)
          VALUES (${event.id}, ${JSON.stringify(event)}::jsonb, ${leaseUntil ?? null}::timestamptz)
          ON CONFLICT (id) DO NOTHING
          RETURNING id`
          // Sent with the unit's last statement. Unless it is handed over, on a Postgres server the relays of
          // every instance hear of it at commit: the notification rides in that statement, sent only when a row
          // was added. This instance's relay is woken (and handed the event) after the commit.
          yield* writeBehind(sql, insert, {
            query: (added) =>
              database.kind === "postgres" && leaseUntil === undefined
                ? sql`SELECT count(*)::integer FROM (SELECT pg_notify(${channel}, ${instance}) FROM ${added} LIMIT 1) AS n`
                : sql`SELECT count(*)::integer FROM (SELECT FROM ${added} LIMIT 1) AS n`,
            onValue: (added) =>
              added !== 1
                ? Effect.void
                : transactions.afterCommit(
                    Effect.andThen(
                      leaseUntil === undefined
                        ? Effect.void
                        : handOver.give({ event, status: "pending", attempts: 0, nextAttemptAt: leaseUntil }),
                      enqueued.open
                    )
                  )
          })
        }, Effect.orDie),
        openHandOver: handOver.open,
        takeHandedOver: handOver.take,
        awaitEnqueued: (millis) =>
          enqueued.await.pipe(Effect.timeoutOption(millis), Effect.andThen(enqueued.close), Effect.asVoid),
        pending: Effect.fn("ProducerOutboxSql.pending")(function* (limit: number) {
          return (yield* pendingRows(limit)).map((row) => toEvent(row.event))
        }, Effect.orDie),
        claimDue: Effect.fn("ProducerOutboxSql.claimDue")(function* (
          nowIso: string,
          leaseUntilIso: string,
          limit: number
        ) {
          const rows = yield* claimRows({ now: nowIso, leaseUntil: leaseUntilIso, limit })
          return rows.map(toEntry).sort((a, b) => (a.event.id < b.event.id ? -1 : 1))
        }, Effect.orDie),
        record: Effect.fn("ProducerOutboxSql.record")(function* (id: string, outcome: RelayOutcome) {
          yield* record(id, outcome)
        }, Effect.orDie),
        recordAll: Effect.fn("ProducerOutboxSql.recordAll")(function* (attempts: ReadonlyArray<RecordedAttempt>) {
          const delivered = attempts.flatMap(({ id, outcome }) =>
            outcome._tag === "Delivered" ? [{ id, at: outcome.at, code: outcome.statusCode }] : []
          )
          // The deliveries of a pass in one statement (a lone one as `record` writes it); the rest one by one.
          if (delivered.length > 1) {
            yield* sql`UPDATE ${outbox} AS o SET delivered_at = d.at::timestamptz, attempts = o.attempts + 1,
              next_attempt_at = NULL, last_error = NULL, last_status_code = d.code
              FROM jsonb_to_recordset(${JSON.stringify(delivered)}::jsonb) AS d(id text, at text, code integer)
              WHERE o.id = d.id AND o.delivered_at IS NULL AND o.failed_at IS NULL`
          }
          for (const { id, outcome } of attempts) {
            if (outcome._tag !== "Delivered" || delivered.length === 1) yield* record(id, outcome)
          }
        }, Effect.orDie),
        get: Effect.fn("ProducerOutboxSql.get")(function* (id: string) {
          return Option.getOrUndefined(Option.map(yield* getRow(id), toEntry))
        }, Effect.orDie)
      })
    })
  ).pipe(Layer.provide(TransactionsSql))
