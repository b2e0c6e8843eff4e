import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { deliveryId } from "../../../core/hub/Deliveries.ts"
import { NotificationFiling } from "../../../core/hub/NotificationFiling.ts"
import { finishEvents } from "./EventStoreSql.ts"
import { cancelSettled, fileIfAbsent, settleFiled } from "./NotificationStoreSql.ts"

/**
 * The NotificationFiling port over `hub.notifications`, `hub.deliveries` and `hub.events` in ONE statement,
 * which commits or fails whole, without a transaction around it (`BEGIN` and `COMMIT` would be two more round
 * trips): the settlements applied to the notifications filed before, their pending deliveries cancelled (the
 * statement's own inserts are not visible to its updates; the processor files those settled already), the
 * notifications inserted if absent, the deliveries of those inserted now (their ids come back from that
 * insert in the same statement; a row named by several once, the first given), the events finished. Rows
 * are written in key order (notifications by service and event id, deliveries by id), as the stores write
 * them, so that two processors filing the same events never deadlock. SQL failures are defects.
 */
export const NotificationFilingSql: Layer.Layer<NotificationFiling, never, SqlClient.SqlClient> = Layer.effect(
  NotificationFiling,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return NotificationFiling.of({
      file: (batch) => {
        const settlements = batch.settlements ?? []
        if (batch.notifications.length === 0 && batch.finished.length === 0 && settlements.length === 0) {
          return Effect.succeed([])
        }
        // `ord` keeps the order given, so that of the rows sharing an id the first given among those filed now wins.
        const deliveries = batch.deliveries.map((d, ord) => ({
          id: deliveryId(d),
          notification_id: d.notificationId,
          user_id: d.userId,
          channel: d.channel,
          target: d.target,
          next_attempt_at: d.nextAttemptAt,
          created_at: d.createdAt,
          ord
        }))
        return sql<{ readonly id: string }>`
          WITH n AS (${fileIfAbsent(sql, batch.notifications)}), d AS (
            INSERT INTO hub.deliveries (id, notification_id, user_id, channel, target, status, next_attempt_at,
              created_at)
            SELECT DISTINCT ON (d.id) d.id, d.notification_id, d.user_id, d.channel, d.target, 'pending',
              d.next_attempt_at, d.created_at
            FROM jsonb_to_recordset(${JSON.stringify(deliveries)}::jsonb) AS d(id text, notification_id text,
              user_id text, channel text, target text, next_attempt_at timestamptz, created_at timestamptz, ord integer)
            WHERE d.notification_id IN (SELECT id FROM n)
            ORDER BY d.id, d.ord
            ON CONFLICT (id) DO NOTHING
          ), e AS (${finishEvents(sql, batch.finished, "processed", batch.atIso)}), s AS (${
            settlements.length === 0 ? sql`SELECT NULL::text AS id WHERE FALSE` : settleFiled(sql, settlements)
          }), c AS (${cancelSettled(sql, "s")})
          SELECT id FROM n`.pipe(
          Effect.map((rows) => {
            const filed = new Set(rows.map((row) => row.id))
            return batch.notifications.filter((n) => filed.has(n.id))
          }),
          Effect.orDie
        )
      }
    })
  })
)
