import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { EmailQueue, type EmailBatch } from "../../../core/hub/EmailQueue.ts"
import type { Notification } from "../../../core/hub/NotificationStore.ts"

const Item = Schema.Struct({
  id: Schema.String,
  userId: Schema.String,
  email: Schema.String,
  service: Schema.String,
  eventId: Schema.String,
  type: Schema.String,
  title: Schema.String,
  body: Schema.NullOr(Schema.String),
  url: Schema.NullOr(Schema.String),
  category: Schema.NullOr(Schema.String),
  createdAt: Schema.String
})

const Row = Schema.Struct({ item: Item })

const oldestFirst = (a: Notification, b: Notification) =>
  a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0

/**
 * The EmailQueue port over `hub.email_queue` (0005_notifications.ts). A claim takes the users with the
 * oldest unleased items and leases all their unleased items in one UPDATE (rows locked with SKIP LOCKED and
 * rechecked once locked, so two batchers never send the same item). SQL failures are defects.
 */
export const EmailQueueSql: Layer.Layer<EmailQueue, never, SqlClient.SqlClient> = Layer.effect(
  EmailQueue,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const claimRows = SqlSchema.findAll({
      Request: Schema.Struct({ nowIso: Schema.String, leaseUntilIso: Schema.String, maxUsers: Schema.Int }),
      Result: Row,
      // The "due" conditions are repeated in the locking SELECT on purpose: Postgres rechecks only that
      // SELECT's own conditions on a row another batcher leased (and committed) after this statement's
      // snapshot, so with them only in the CTE two batchers could both claim, and send, the same items.
      execute: ({ nowIso, leaseUntilIso, maxUsers }) => sql`
        WITH users AS (
          SELECT user_id FROM hub.email_queue
          WHERE sent_at IS NULL AND (lease_until IS NULL OR lease_until <= ${nowIso}::timestamptz)
          GROUP BY user_id ORDER BY min(created_at), user_id LIMIT ${maxUsers}
        )
        UPDATE hub.email_queue SET lease_until = ${leaseUntilIso}::timestamptz
        WHERE notification_id IN (
          SELECT notification_id FROM hub.email_queue
          WHERE user_id IN (SELECT user_id FROM users)
            AND sent_at IS NULL AND (lease_until IS NULL OR lease_until <= ${nowIso}::timestamptz)
          FOR UPDATE SKIP LOCKED)
        RETURNING item`
    })
    const pendingRows = SqlSchema.findAll({
      Request: Schema.String,
      Result: Row,
      execute: (userId) => sql`
        SELECT item FROM hub.email_queue WHERE user_id = ${userId} AND sent_at IS NULL
        ORDER BY created_at, notification_id`
    })

    return EmailQueue.of({
      enqueue: (n) =>
        sql<{ readonly notification_id: string }>`
          INSERT INTO hub.email_queue (notification_id, user_id, item, created_at)
          VALUES (${n.id}, ${n.userId}, ${JSON.stringify(n)}::jsonb, ${n.createdAt}::timestamptz)
          ON CONFLICT (notification_id) DO NOTHING RETURNING notification_id`.pipe(
          Effect.map((rows) => rows.length === 1),
          Effect.orDie
        ),
      claim: (nowIso, leaseUntilIso, maxUsers) =>
        claimRows({ nowIso, leaseUntilIso, maxUsers }).pipe(
          Effect.map((rows) => {
            const byUser = new Map<string, Array<Notification>>()
            for (const { item } of rows) byUser.set(item.userId, [...(byUser.get(item.userId) ?? []), item])
            return [...byUser.values()]
              .map((items) => items.sort(oldestFirst))
              .sort((a, b) => oldestFirst(a[0]!, b[0]!))
              .map((items): EmailBatch => ({ userId: items[0]!.userId, email: items[0]!.email, items }))
          }),
          Effect.orDie
        ),
      markSent: (ids, atIso) =>
        ids.length === 0
          ? Effect.void
          : sql`UPDATE hub.email_queue SET sent_at = ${atIso}::timestamptz, lease_until = NULL
              WHERE notification_id IN ${sql.in(ids)}`.pipe(Effect.asVoid, Effect.orDie),
      pending: (userId) =>
        pendingRows(userId).pipe(
          Effect.map((rows) => rows.map((row) => row.item)),
          Effect.orDie
        )
    })
  })
)
