import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import {
  DeliveryChannels,
  DeliveryStatuses,
  DeliveryStore,
  deliveryId,
  type ClaimedDelivery,
  type Delivery
} from "../../../core/hub/Deliveries.ts"
import { NotificationActionsColumn, NotificationRow, toNotification } from "./NotificationStoreSql.ts"
import { claimLeased } from "../LeaseClaims.ts"

const DeliveryRow = Schema.Struct({
  id: Schema.String,
  notification_id: Schema.String,
  user_id: Schema.String,
  channel: Schema.Literals(DeliveryChannels),
  target: Schema.String,
  status: Schema.Literals(DeliveryStatuses),
  attempts: Schema.Number,
  next_attempt_at: Schema.Date,
  last_error: Schema.NullOr(Schema.String),
  created_at: Schema.Date,
  sent_at: Schema.NullOr(Schema.Date)
})

const toDelivery = (row: typeof DeliveryRow.Type): Delivery => ({
  id: row.id,
  notificationId: row.notification_id,
  userId: row.user_id,
  channel: row.channel,
  target: row.target,
  status: row.status,
  attempts: row.attempts,
  nextAttemptAt: row.next_attempt_at.toISOString(),
  lastError: row.last_error,
  createdAt: row.created_at.toISOString(),
  sentAt: row.sent_at?.toISOString() ?? null
})

/** A claimed row joined with its notification; the notification's columns prefixed `n_`. */
const ClaimedRow = Schema.Struct({
  ...DeliveryRow.fields,
  n_id: Schema.String,
  n_user_id: Schema.String,
  n_email: Schema.String,
  n_service: Schema.String,
  n_event_id: Schema.String,
  n_type: Schema.String,
  n_title: Schema.String,
  n_body: Schema.NullOr(Schema.String),
  n_url: Schema.NullOr(Schema.String),
  n_category: Schema.NullOr(Schema.String),
  n_actions: Schema.optionalKey(NotificationActionsColumn),
  n_created_at: Schema.Date,
  n_read_at: Schema.NullOr(Schema.Date)
})

const toClaimed = (row: typeof ClaimedRow.Type): ClaimedDelivery => {
  const notification: typeof NotificationRow.Type = {
    id: row.n_id,
    user_id: row.n_user_id,
    email: row.n_email,
    service: row.n_service,
    event_id: row.n_event_id,
    type: row.n_type,
    title: row.n_title,
    body: row.n_body,
    url: row.n_url,
    category: row.n_category,
    ...(row.n_actions === undefined ? {} : { actions: row.n_actions }),
    created_at: row.n_created_at,
    read_at: row.n_read_at
  }
  return { delivery: toDelivery(row), notification: toNotification(notification) }
}

const byAge = (a: ClaimedDelivery, b: ClaimedDelivery) =>
  a.delivery.createdAt < b.delivery.createdAt
    ? -1
    : a.delivery.createdAt > b.delivery.createdAt
      ? 1
      : a.delivery.id < b.delivery.id
        ? -1
        : a.delivery.id > b.delivery.id
          ? 1
          : 0

/**
 * The DeliveryStore port over `hub.deliveries` (0008_deliveries.ts). A claim is one UPDATE over rows
 * locked with SKIP LOCKED, moving them to `sending` and counting the attempt, joined with their
 * notifications for the sender. SQL failures are defects.
 */
export const DeliveryStoreSql: Layer.Layer<DeliveryStore, never, SqlClient.SqlClient> = Layer.effect(
  DeliveryStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // Columns of the claimed rows and of their notifications, as ClaimedRow reads them.
    const claimedColumns = sql`c.id, c.notification_id, c.user_id, c.channel, c.target, c.status, c.attempts,
      c.next_attempt_at, c.last_error, c.created_at, c.sent_at, n.id AS n_id, n.user_id AS n_user_id,
      n.email AS n_email, n.service AS n_service, n.event_id AS n_event_id, n.type AS n_type, n.title AS n_title,
      n.body AS n_body, n.url AS n_url, n.category AS n_category, n.actions AS n_actions, n.created_at AS n_created_at,
      n.read_at AS n_read_at`
    // The "due" conditions are repeated in each locking SELECT on purpose: Postgres rechecks only that
    // SELECT's own conditions on a row another worker claimed (and committed) after this statement's
    // snapshot, so with them only in an outer query two workers could both claim, and send, one row.
    const claimEmailRows = SqlSchema.findAll({
      Request: Schema.Struct({ nowIso: Schema.String, leaseUntilIso: Schema.String, maxUsers: Schema.Int }),
      Result: ClaimedRow,
      execute: ({ nowIso, leaseUntilIso, maxUsers }) => sql`
        WITH users AS (
          SELECT user_id FROM hub.deliveries
          WHERE channel = 'email' AND status = 'pending' AND next_attempt_at <= ${nowIso}::timestamptz
          GROUP BY user_id ORDER BY min(next_attempt_at), user_id LIMIT ${maxUsers}
        ), c AS (
          UPDATE hub.deliveries SET status = 'sending', attempts = attempts + 1,
            lease_until = ${leaseUntilIso}::timestamptz
          WHERE id IN (
            SELECT id FROM hub.deliveries
            WHERE channel = 'email' AND status = 'pending' AND user_id IN (SELECT user_id FROM users)
            FOR UPDATE SKIP LOCKED)
          RETURNING *
        )
        SELECT ${claimedColumns} FROM c JOIN hub.notifications n ON n.id = c.notification_id`
    })
    const claimRows = SqlSchema.findAll({
      Request: Schema.Struct({
        channel: Schema.String,
        nowIso: Schema.String,
        leaseUntilIso: Schema.String,
        limit: Schema.Int
      }),
      Result: ClaimedRow,
      execute: ({ channel, nowIso, leaseUntilIso, limit }) => sql`
        WITH c AS (${claimLeased(sql, {
          table: sql`hub.deliveries`,
          set: sql`status = 'sending', attempts = attempts + 1, lease_until = ${leaseUntilIso}::timestamptz`,
          due: sql`channel = ${channel} AND status = 'pending' AND next_attempt_at <= ${nowIso}::timestamptz`,
          order: sql`next_attempt_at, id`,
          limit,
          returning: sql`*`
        })})
        SELECT ${claimedColumns} FROM c JOIN hub.notifications n ON n.id = c.notification_id`
    })
    const logRows = SqlSchema.findAll({
      Request: Schema.Struct({ userId: Schema.String, limit: Schema.Int }),
      Result: DeliveryRow,
      execute: ({ userId, limit }) => sql`
        SELECT id, notification_id, user_id, channel, target, status, attempts, next_attempt_at, last_error,
          created_at, sent_at
        FROM hub.deliveries WHERE user_id = ${userId} ORDER BY created_at DESC, id DESC LIMIT ${limit}`
    })

    return DeliveryStore.of({
      enqueue: (deliveries) => {
        // One row per id, the first given (a shared row is logged under the first person it was queued for),
        // in id order, so that two processors queueing the same shared row never deadlock.
        const firsts = new Map<string, (typeof deliveries)[number]>()
        for (const d of deliveries) {
          const id = deliveryId(d)
          if (!firsts.has(id)) firsts.set(id, d)
        }
        if (firsts.size === 0) return Effect.void
        const rows = [...firsts.entries()]
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([id, d]) => ({
            id,
            notification_id: d.notificationId,
            user_id: d.userId,
            channel: d.channel,
            target: d.target,
            next_attempt_at: d.nextAttemptAt,
            created_at: d.createdAt
          }))
        return sql`
          INSERT INTO hub.deliveries (id, notification_id, user_id, channel, target, status, next_attempt_at,
            created_at)
          SELECT d.id, d.notification_id, d.user_id, d.channel, d.target, 'pending', d.next_attempt_at, d.created_at
          FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS d(id text, notification_id text, user_id text,
            channel text, target text, next_attempt_at timestamptz, created_at timestamptz)
          ON CONFLICT (id) DO NOTHING`.pipe(Effect.asVoid, Effect.orDie)
      },
      claimEmail: (nowIso, leaseUntilIso, maxUsers) =>
        claimEmailRows({ nowIso, leaseUntilIso, maxUsers }).pipe(
          Effect.map((rows) => {
            const byUser = new Map<string, Array<ClaimedDelivery>>()
            for (const row of rows) {
              const claimed = toClaimed(row)
              byUser.set(row.user_id, [...(byUser.get(row.user_id) ?? []), claimed])
            }
            return [...byUser.values()].map((group) => group.sort(byAge)).sort((a, b) => byAge(a[0]!, b[0]!))
          }),
          Effect.orDie
        ),
      claim: (channel, nowIso, leaseUntilIso, limit) =>
        claimRows({ channel, nowIso, leaseUntilIso, limit }).pipe(
          Effect.map((rows) => rows.map(toClaimed).sort(byAge)),
          Effect.orDie
        ),
      settle: (ids, outcome) => {
        if (ids.length === 0) return Effect.void
        const settled =
          outcome.status === "sent"
            ? sql`status = 'sent', sent_at = ${outcome.atIso}::timestamptz, lease_until = NULL`
            : outcome.status === "pending"
              ? sql`status = 'pending', next_attempt_at = ${outcome.nextAttemptAt}::timestamptz,
                  last_error = ${outcome.error}, lease_until = NULL`
              : sql`status = ${outcome.status}, last_error = ${outcome.error}, lease_until = NULL`
        return sql`UPDATE hub.deliveries SET ${settled}
          WHERE id IN ${sql.in(ids)} AND status IN ('sending', 'interrupted')`.pipe(Effect.asVoid, Effect.orDie)
      },
      interruptStale: (nowIso) =>
        sql<{ readonly id: string }>`
          UPDATE hub.deliveries SET status = 'interrupted', lease_until = NULL,
            last_error = 'the server stopped while sending; not sent again'
          WHERE status = 'sending' AND lease_until <= ${nowIso}::timestamptz RETURNING id`.pipe(
          Effect.map((rows) => rows.length),
          Effect.orDie
        ),
      attemptsOf: (channel, notificationIds) =>
        notificationIds.length === 0
          ? Effect.succeed(new Map<string, number>())
          : sql<{ readonly notification_id: string; readonly attempts: number }>`
              SELECT notification_id, sum(attempts)::int AS attempts FROM hub.deliveries
              WHERE notification_id IN ${sql.in([...new Set(notificationIds)])} AND channel = ${channel}
              GROUP BY notification_id`.pipe(
              Effect.map((rows) => new Map(rows.map((row) => [row.notification_id, Number(row.attempts)]))),
              Effect.orDie
            ),
      cancelTarget: (channel, target, reason) =>
        sql`UPDATE hub.deliveries SET status = 'cancelled', last_error = ${reason}
          WHERE channel = ${channel} AND target = ${target} AND status = 'pending'`.pipe(Effect.asVoid, Effect.orDie),
      forUser: (userId, limit) =>
        logRows({ userId, limit }).pipe(
          Effect.map((rows) => rows.map(toDelivery)),
          Effect.orDie
        )
    })
  })
)
