import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { NotificationStore, type Notification } from "../../../core/hub/NotificationStore.ts"

const Row = Schema.Struct({
  id: Schema.String,
  user_id: Schema.String,
  email: Schema.String,
  service: Schema.String,
  event_id: Schema.String,
  type: Schema.String,
  title: Schema.String,
  body: Schema.NullOr(Schema.String),
  url: Schema.NullOr(Schema.String),
  category: Schema.NullOr(Schema.String),
  created_at: Schema.Date
})

const toNotification = (row: typeof Row.Type): Notification => ({
  id: row.id,
  userId: row.user_id,
  email: row.email,
  service: row.service,
  eventId: row.event_id,
  type: row.type,
  title: row.title,
  body: row.body,
  url: row.url,
  category: row.category,
  createdAt: row.created_at.toISOString()
})

/**
 * The NotificationStore port over `hub.notifications` (0005_notifications.ts). Filing is insert-if-absent
 * on the unique (service, event_id), then a read of the stored row: a reprocessed event finds its first
 * notification. SQL failures are defects.
 */
export const NotificationStoreSql: Layer.Layer<NotificationStore, never, SqlClient.SqlClient> = Layer.effect(
  NotificationStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const byEvent = SqlSchema.findOne({
      Request: Schema.Struct({ service: Schema.String, eventId: Schema.String }),
      Result: Row,
      execute: ({ service, eventId }) =>
        sql`SELECT * FROM hub.notifications WHERE service = ${service} AND event_id = ${eventId}`
    })
    const feedRows = SqlSchema.findAll({
      Request: Schema.Struct({ userId: Schema.String, limit: Schema.Int }),
      Result: Row,
      execute: ({ userId, limit }) => sql`
        SELECT * FROM hub.notifications WHERE user_id = ${userId} ORDER BY created_at DESC, id DESC LIMIT ${limit}`
    })

    return NotificationStore.of({
      file: (n) =>
        Effect.gen(function* () {
          const inserted = yield* sql<{ readonly id: string }>`
            INSERT INTO hub.notifications (id, user_id, email, service, event_id, type, title, body, url, category,
              created_at)
            VALUES (${n.id}, ${n.userId}, ${n.email}, ${n.service}, ${n.eventId}, ${n.type}, ${n.title}, ${n.body},
              ${n.url}, ${n.category}, ${n.createdAt}::timestamptz)
            ON CONFLICT (service, event_id) DO NOTHING RETURNING id`
          if (inserted.length === 1) return { notification: n, filed: true }
          const stored = yield* byEvent({ service: n.service, eventId: n.eventId })
          return { notification: toNotification(stored), filed: false }
        }).pipe(Effect.orDie),
      feed: (userId, limit) =>
        feedRows({ userId, limit }).pipe(
          Effect.map((rows) => rows.map(toNotification)),
          Effect.orDie
        )
    })
  })
)
