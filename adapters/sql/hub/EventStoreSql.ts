import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { EventStatuses, EventStore, type StoredEvent } from "../../../core/hub/EventStore.ts"

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

/**
 * The EventStore port over `hub.events` (0004_events.ts). Insert-if-absent is one `INSERT ... ON CONFLICT
 * DO NOTHING RETURNING`: the primary key (service, id) decides, so concurrent deliveries of one event store
 * it once and exactly one of them learns `new`, after its statement committed. A claim is one UPDATE over
 * rows locked with SKIP LOCKED, so processors on several servers never claim the same event. SQL failures
 * are defects.
 */
export const EventStoreSql: Layer.Layer<EventStore, never, SqlClient.SqlClient> = Layer.effect(
  EventStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const raw = sql.unsafe(columns)

    const claimRows = SqlSchema.findAll({
      Request: Schema.Struct({ nowIso: Schema.String, leaseUntilIso: Schema.String, limit: Schema.Int }),
      Result: Row,
      execute: ({ nowIso, leaseUntilIso, limit }) => sql`
        UPDATE hub.events SET lease_until = ${leaseUntilIso}::timestamptz, attempts = attempts + 1
        WHERE (service, id) IN (
          SELECT service, id FROM hub.events
          WHERE status = 'accepted' AND (lease_until IS NULL OR lease_until <= ${nowIso}::timestamptz)
          ORDER BY received_at, id
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED)
        RETURNING ${raw}`
    })
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

    return EventStore.of({
      insert: (event) =>
        sql<{ readonly id: string }>`
          INSERT INTO hub.events (service, id, type, occurred_at, subject_email, subject_company_id, data,
            delivery_id, received_at, status)
          VALUES (${event.service}, ${event.id}, ${event.type}, ${event.occurredAt}, ${event.subject.email},
            ${event.subject.companyId ?? null}, ${JSON.stringify(event.data ?? null)}::jsonb, ${event.deliveryId},
            ${event.receivedAt}::timestamptz, 'accepted')
          ON CONFLICT (service, id) DO NOTHING
          RETURNING id`.pipe(
          Effect.map((rows) => (rows.length === 1 ? ("new" as const) : ("duplicate" as const))),
          Effect.orDie
        ),
      claim: (nowIso, leaseUntilIso, limit) =>
        claimRows({ nowIso, leaseUntilIso, limit }).pipe(
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
