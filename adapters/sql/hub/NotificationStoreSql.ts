import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import {
  NotificationStore,
  settledReason,
  type Notification,
  type Settlement
} from "../../../core/hub/NotificationStore.ts"

/** The `actions` column (0018_notification_actions.ts): null when the message offers no answers. */
export const NotificationActionsColumn = Schema.NullOr(
  Schema.Array(Schema.Struct({ label: Schema.String, url: Schema.String }))
)

export const NotificationRow = Schema.Struct({
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
  actions: Schema.optionalKey(NotificationActionsColumn),
  created_at: Schema.Date,
  read_at: Schema.NullOr(Schema.Date)
})

export const toNotification = (row: typeof NotificationRow.Type): Notification => ({
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
  ...(row.actions === undefined || row.actions === null || row.actions.length === 0 ? {} : { actions: row.actions }),
  createdAt: row.created_at.toISOString(),
  readAt: row.read_at?.toISOString() ?? null
})

/** Notifications in key order (service, then event id): every writer files them so, and none deadlocks another. */
const inEventOrder = (a: Notification, b: Notification) =>
  a.service < b.service ? -1 : a.service > b.service ? 1 : a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : 0

/**
 * The statement that files `list` where its event has no notification yet, answering the ids of
 * those filed now. In (service, event id) order, so that two processors filing the same events never
 * deadlock. Also a part of the processor's one-statement filing (NotificationFilingSql.ts).
 */
export const fileIfAbsent = (sql: SqlClient.SqlClient, list: ReadonlyArray<Notification>) => {
  const rows = [...list].sort(inEventOrder).map((n) => ({
    id: n.id,
    user_id: n.userId,
    email: n.email,
    service: n.service,
    event_id: n.eventId,
    type: n.type,
    title: n.title,
    body: n.body,
    url: n.url,
    category: n.category,
    actions: n.actions === undefined || n.actions.length === 0 ? null : n.actions,
    created_at: n.createdAt,
    read_at: n.readAt
  }))
  return sql<{ readonly id: string }>`
    INSERT INTO hub.notifications (id, user_id, email, service, event_id, type, title, body, url,
      category, actions, created_at, read_at)
    SELECT n.id, n.user_id, n.email, n.service, n.event_id, n.type, n.title, n.body, n.url, n.category,
      n.actions, n.created_at, n.read_at
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS n(id text, user_id text, email text,
      service text, event_id text, type text, title text, body text, url text, category text, actions jsonb,
      created_at timestamptz, read_at timestamptz)
    ON CONFLICT (service, event_id) DO NOTHING RETURNING id`
}

/**
 * The statement that applies `settlements` to the notifications filed before it (every user's), answering the
 * ids it changed: found by service and link (0016_notifications_by_link.ts), narrowed to the categories named.
 * Also a part of the processor's one-statement filing (NotificationFilingSql.ts), where it does not see the
 * notifications that same statement files: the processor files those settled already. `cancelSettled` goes
 * beside it, in the same statement.
 */
export const settleFiled = (sql: SqlClient.SqlClient, settlements: ReadonlyArray<Settlement>) => {
  const rows = settlements.map((s) => ({
    service: s.service,
    url: s.url,
    categories: s.categories,
    body: s.body,
    at: s.atIso
  }))
  return sql<{ readonly id: string }>`
    UPDATE hub.notifications AS n
    SET read_at = coalesce(n.read_at, s.at), body = coalesce(s.body, n.body), actions = NULL
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS s(service text, url text, categories jsonb,
      body text, at timestamptz)
    WHERE n.service = s.service AND n.url = s.url
      AND (jsonb_array_length(s.categories) = 0 OR n.category IN (SELECT jsonb_array_elements_text(s.categories)))
    RETURNING n.id`
}

/** The statement cancelling the pending deliveries of the notifications the CTE `settled` names. */
export const cancelSettled = (sql: SqlClient.SqlClient, settled: string) =>
  sql`UPDATE hub.deliveries SET status = 'cancelled', last_error = ${settledReason}
    WHERE status = 'pending' AND notification_id IN (SELECT id FROM ${sql(settled)})`

/**
 * The NotificationStore port over `hub.notifications` (0005_notifications.ts, 0008_deliveries.ts). Filing is
 * insert-if-absent on the unique (service, event_id), then a read of the stored row: a reprocessed event
 * finds its first notification. Every read of the person's own feed is scoped to their user id. SQL
 * failures are defects.
 */
export const NotificationStoreSql: Layer.Layer<NotificationStore, never, SqlClient.SqlClient> = Layer.effect(
  NotificationStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const byEvent = SqlSchema.findOne({
      Request: Schema.Struct({ service: Schema.String, eventId: Schema.String }),
      Result: NotificationRow,
      execute: ({ service, eventId }) =>
        sql`SELECT * FROM hub.notifications WHERE service = ${service} AND event_id = ${eventId}`
    })
    const feedRows = SqlSchema.findAll({
      Request: Schema.Struct({ userId: Schema.String, limit: Schema.Int }),
      Result: NotificationRow,
      execute: ({ userId, limit }) => sql`
        SELECT * FROM hub.notifications WHERE user_id = ${userId} ORDER BY created_at DESC, id DESC LIMIT ${limit}`
    })
    const notHidden = (hidden: ReadonlyArray<string>) =>
      hidden.length === 0 ? sql`TRUE` : sql`service NOT IN ${sql.in(hidden)}`
    const pageRows = SqlSchema.findAll({
      Request: Schema.Struct({
        userId: Schema.String,
        limit: Schema.Int,
        afterCreatedAt: Schema.NullOr(Schema.String),
        afterId: Schema.String,
        hidden: Schema.Array(Schema.String)
      }),
      Result: NotificationRow,
      execute: ({ userId, limit, afterCreatedAt, afterId, hidden }) => sql`
        SELECT * FROM hub.notifications
        WHERE user_id = ${userId} AND ${notHidden(hidden)}
          AND ${afterCreatedAt === null ? sql`TRUE` : sql`(created_at, id) < (${afterCreatedAt}::timestamptz, ${afterId})`}
        ORDER BY created_at DESC, id DESC LIMIT ${limit}`
    })
    const markedRows = SqlSchema.findAll({
      Request: Schema.Struct({ userId: Schema.String, id: Schema.String, atIso: Schema.String }),
      Result: NotificationRow,
      execute: ({ userId, id, atIso }) => sql`
        UPDATE hub.notifications SET read_at = coalesce(read_at, ${atIso}::timestamptz)
        WHERE id = ${id} AND user_id = ${userId} RETURNING *`
    })

    return NotificationStore.of({
      file: (n) =>
        Effect.gen(function* () {
          const inserted = yield* sql<{ readonly id: string }>`
            INSERT INTO hub.notifications (id, user_id, email, service, event_id, type, title, body, url, category,
              actions, created_at, read_at)
            VALUES (${n.id}, ${n.userId}, ${n.email}, ${n.service}, ${n.eventId}, ${n.type}, ${n.title}, ${n.body},
              ${n.url}, ${n.category},
              ${n.actions === undefined || n.actions.length === 0 ? null : JSON.stringify(n.actions)}::jsonb,
              ${n.createdAt}::timestamptz, ${n.readAt}::timestamptz)
            ON CONFLICT (service, event_id) DO NOTHING RETURNING id`
          if (inserted.length === 1) return { notification: n, filed: true }
          const stored = yield* byEvent({ service: n.service, eventId: n.eventId })
          return { notification: toNotification(stored), filed: false }
        }).pipe(Effect.orDie),
      fileAll: (list) =>
        list.length === 0
          ? Effect.succeed([])
          : Effect.gen(function* () {
              const inserted = yield* fileIfAbsent(sql, list)
              const filed = new Set(inserted.map((row) => row.id))
              return list.filter((n) => filed.has(n.id))
            }).pipe(Effect.orDie),
      feed: (userId, limit) =>
        feedRows({ userId, limit }).pipe(
          Effect.map((rows) => rows.map(toNotification)),
          Effect.orDie
        ),
      page: (userId, query) =>
        pageRows({
          userId,
          limit: query.limit,
          afterCreatedAt: query.after?.createdAt ?? null,
          afterId: query.after?.id ?? "",
          hidden: query.hiddenServices
        }).pipe(
          Effect.map((rows) => rows.map(toNotification)),
          Effect.orDie
        ),
      unreadCount: (userId, hidden) =>
        sql<{ readonly n: number | string }>`
          SELECT count(*) AS n FROM hub.notifications
          WHERE user_id = ${userId} AND read_at IS NULL AND ${notHidden(hidden)}`.pipe(
          Effect.map((rows) => Number(rows[0]?.n ?? 0)),
          Effect.orDie
        ),
      markRead: (userId, id, atIso) =>
        markedRows({ userId, id, atIso }).pipe(
          Effect.map((rows) => (rows[0] === undefined ? undefined : toNotification(rows[0]))),
          Effect.orDie
        ),
      markAllRead: (userId, atIso) =>
        sql<{ readonly id: string }>`
          UPDATE hub.notifications SET read_at = ${atIso}::timestamptz
          WHERE user_id = ${userId} AND read_at IS NULL RETURNING id`.pipe(
          Effect.map((rows) => rows.length),
          Effect.orDie
        ),
      settle: (settlements) =>
        settlements.length === 0
          ? Effect.succeed(0)
          : sql<{ readonly id: string }>`
              WITH s AS (${settleFiled(sql, settlements)}), c AS (${cancelSettled(sql, "s")})
              SELECT id FROM s`.pipe(
              Effect.map((rows) => rows.length),
              Effect.orDie
            )
    })
  })
)
