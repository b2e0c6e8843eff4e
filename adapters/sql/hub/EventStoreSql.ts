import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { EventStatuses, EventStore, type NewEvent, type StoredEvent } from "../../../core/hub/EventStore.ts"
import { makeWriteBatcher } from "../WriteBatcher.ts"
import { leaseClaims } from "../LeaseClaims.ts"

const Row = Schema.Struct({
  service: Schema.String,
  id: Schema.String,
  type: Schema.String,
  occurred_at: Schema.String,
  subject_email: Schema.String,
  subject_company_id: Schema.NullOr(Schema.String),
  data: Schema.Unknown,
  delivery_id: Schema.String,
  received_at: Schema.Date,
  status: Schema.Literals(EventStatuses),
  attempts: Schema.Number,
  processed_at: Schema.NullOr(Schema.Date)
})

const columns = `service, id, type, occurred_at, subject_email, subject_company_id, data, delivery_id, received_at,
  status, attempts, processed_at`

const keyOf = (service: string, id: string) => `${service}\u0000${id}`

/** Code-unit order of (service, id): every batch locks its keys in this order, so two batches never deadlock. */
const byKey = (a: NewEvent, b: NewEvent) =>
  a.service < b.service ? -1 : a.service > b.service ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0

const toEvent = (row: typeof Row.Type): StoredEvent => ({
  service: row.service,
  id: row.id,
  type: row.type,
  occurredAt: row.occurred_at,
  subject:
    row.subject_company_id === null
      ? { email: row.subject_email }
      : { email: row.subject_email, companyId: row.subject_company_id },
  data: row.data,
  deliveryId: row.delivery_id,
  receivedAt: row.received_at.toISOString(),
  status: row.status,
  attempts: row.attempts,
  processedAt: row.processed_at === null ? null : row.processed_at.toISOString()
})

type EventKeys = ReadonlyArray<{ readonly service: string; readonly id: string }>

/** The condition that a row of `hub.events` is one of the events `keys`, passed as one JSON parameter. */
const oneOf = (sql: SqlClient.SqlClient, keys: EventKeys) =>
  sql`(service, id) IN (
      SELECT k.service, k.id FROM jsonb_to_recordset(${JSON.stringify(keys.map(({ service, id }) => ({ service, id })))}::jsonb)
        AS k(service text, id text))`

/**
 * The statement that finishes the events `keys` with `status` at `atIso`. Also a part of the processor's
 * one-statement filing (NotificationFilingSql.ts).
 */
export const finishEvents = (
  sql: SqlClient.SqlClient,
  keys: EventKeys,
  status: "processed" | "failed",
  atIso: string
) =>
  sql`UPDATE hub.events SET status = ${status}, processed_at = ${atIso}::timestamptz, lease_until = NULL
    WHERE ${oneOf(sql, keys)}`

/**
 * The EventStore port over `hub.events` (0004_events.ts). Insert-if-absent is one `INSERT ... ON CONFLICT DO
 * NOTHING RETURNING`: the primary key (service, id) decides, so concurrent deliveries of one event store it
 * once and exactly one of them learns `new`, after its statement committed. Concurrent inserts share one
 * statement (WriteBatcher.ts): the batch's rows in one JSON parameter, in key order; within a batch the first
 * delivery of an event is the one that may learn `new`, its repeats are duplicates. An event stored claimed
 * (`claimedUntil`) is written with its lease and one attempt in that same insert. A claim is one UPDATE over
 * rows locked with SKIP LOCKED, so processors on several servers never claim the same event. SQL failures are
 * defects.
 */
export const EventStoreSql: Layer.Layer<EventStore, never, SqlClient.SqlClient> = Layer.effect(
  EventStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const raw = sql.unsafe(columns)

    const claimRows = leaseClaims(sql, Row, ({ now, leaseUntil }) => ({
      table: sql`hub.events`,
      key: sql`service, id`,
      set: sql`lease_until = ${leaseUntil}::timestamptz, attempts = attempts + 1`,
      due: sql`status = 'accepted' AND (lease_until IS NULL OR lease_until <= ${now}::timestamptz)`,
      order: sql`received_at, id`,
      returning: raw
    }))
    const findRow = SqlSchema.findAll({
      Request: Schema.Struct({ service: Schema.String, id: Schema.String }),
      Result: Row,
      execute: ({ service, id }) => sql`SELECT ${raw} FROM hub.events WHERE service = ${service} AND id = ${id}`
    })
    const listRows = SqlSchema.findAll({
      Request: Schema.Struct({ service: Schema.String, limit: Schema.Int }),
      Result: Row,
      execute: ({ service, limit }) => sql`
        SELECT ${raw} FROM hub.events WHERE service = ${service} ORDER BY received_at DESC, id DESC LIMIT ${limit}`
    })

    const writeBatch = (events: ReadonlyArray<NewEvent>) =>
      Effect.gen(function* () {
        // The index of each key's first delivery in the batch: the one row written for it.
        const firsts = new Map<string, number>()
        events.forEach((event, index) => {
          const key = keyOf(event.service, event.id)
          if (!firsts.has(key)) firsts.set(key, index)
        })
        const rows = [...firsts.values()]
          .map((index) => events[index]!)
          .sort(byKey)
          .map((event) => ({
            service: event.service,
            id: event.id,
            type: event.type,
            occurred_at: event.occurredAt,
            subject_email: event.subject.email,
            subject_company_id: event.subject.companyId ?? null,
            data: event.data ?? null,
            delivery_id: event.deliveryId,
            received_at: event.receivedAt,
            processed: event.processed === true,
            claimed_until: event.processed === true ? null : (event.claimedUntil ?? null)
          }))
        const inserted = yield* sql<{ readonly service: string; readonly id: string }>`
          INSERT INTO hub.events (service, id, type, occurred_at, subject_email, subject_company_id, data,
            delivery_id, received_at, status, processed_at, lease_until, attempts)
          SELECT e.service, e.id, e.type, e.occurred_at, e.subject_email, e.subject_company_id, e.data,
            e.delivery_id, e.received_at, CASE WHEN e.processed THEN 'processed' ELSE 'accepted' END,
            CASE WHEN e.processed THEN e.received_at END, e.claimed_until,
            CASE WHEN e.claimed_until IS NULL THEN 0 ELSE 1 END
          FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS e(service text, id text, type text,
            occurred_at text, subject_email text, subject_company_id text, data jsonb, delivery_id text,
            received_at timestamptz, processed boolean, claimed_until timestamptz)
          ON CONFLICT (service, id) DO NOTHING
          RETURNING service, id`
        const fresh = new Set(inserted.map((row) => keyOf(row.service, row.id)))
        // The first delivery of each key stored now learns `new`; every other is a duplicate.
        return events.map((event, index) => {
          const key = keyOf(event.service, event.id)
          return firsts.get(key) === index && fresh.has(key) ? ("new" as const) : ("duplicate" as const)
        })
      })
    const insert = yield* makeWriteBatcher({ write: writeBatch })

    return EventStore.of({
      insert,
      claim: (nowIso, leaseUntilIso, limit) =>
        claimRows({ now: nowIso, leaseUntil: leaseUntilIso, limit }).pipe(
          Effect.map((rows) =>
            rows
              .map(toEvent)
              .sort((a, b) =>
                a.receivedAt < b.receivedAt ? -1 : a.receivedAt > b.receivedAt ? 1 : a.id < b.id ? -1 : 1
              )
          ),
          Effect.orDie
        ),
      finish: (service, id, status, atIso) =>
        sql`UPDATE hub.events SET status = ${status}, processed_at = ${atIso}::timestamptz, lease_until = NULL
          WHERE service = ${service} AND id = ${id}`.pipe(Effect.asVoid, Effect.orDie),
      release: (keys) =>
        keys.length === 0
          ? Effect.void
          : sql`UPDATE hub.events SET lease_until = NULL, attempts = 0
              WHERE ${oneOf(sql, keys)} AND status = 'accepted' AND attempts = 1`.pipe(Effect.asVoid, Effect.orDie),
      finishAll: (keys, status, atIso) =>
        keys.length === 0 ? Effect.void : finishEvents(sql, keys, status, atIso).pipe(Effect.asVoid, Effect.orDie),
      find: (service, id) =>
        findRow({ service, id }).pipe(
          Effect.map((rows) => (rows[0] === undefined ? undefined : toEvent(rows[0]))),
          Effect.orDie
        ),
      list: (service, limit) =>
        listRows({ service, limit }).pipe(
          Effect.map((rows) => rows.map(toEvent)),
          Effect.orDie
        )
    })
  })
)
