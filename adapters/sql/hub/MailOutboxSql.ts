import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { MailOutbox } from "../../../core/hub/MailOutbox.ts"
import { leaseClaims } from "../LeaseClaims.ts"

const Row = Schema.Struct({ id: Schema.String, sealed: Schema.String, attempts: Schema.Number })

/**
 * The MailOutbox port over `hub.mail_outbox` (0006_sign_in.ts). A claim leases due rows locked with
 * SKIP LOCKED, so several servers' workers never send the same message at once. SQL failures are defects.
 */
export const MailOutboxSql: Layer.Layer<MailOutbox, never, SqlClient.SqlClient> = Layer.effect(
  MailOutbox,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const claimRows = leaseClaims(sql, Row, ({ now, leaseUntil }) => ({
      table: sql`hub.mail_outbox`,
      set: sql`lease_until = ${leaseUntil}::timestamptz`,
      due: sql`sent_at IS NULL AND failed_at IS NULL AND next_attempt_at <= ${now}::timestamptz
        AND (lease_until IS NULL OR lease_until <= ${now}::timestamptz)`,
      order: sql`next_attempt_at, id`,
      returning: sql`id, sealed, attempts`
    }))
    return MailOutbox.of({
      enqueue: (mail) =>
        sql`INSERT INTO hub.mail_outbox (id, sealed, created_at, next_attempt_at)
          VALUES (${mail.id}, ${mail.sealed}, ${mail.createdAt}::timestamptz, ${mail.createdAt}::timestamptz)`.pipe(
          Effect.asVoid,
          Effect.orDie
        ),
      claim: (now, leaseUntil, max) => claimRows({ now, leaseUntil, limit: max }).pipe(Effect.orDie),
      markSent: (id, at) =>
        sql`UPDATE hub.mail_outbox SET sent_at = ${at}::timestamptz, sealed = NULL, lease_until = NULL,
          attempts = attempts + 1 WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie),
      retryAt: (id, nextAttemptAt) =>
        sql`UPDATE hub.mail_outbox SET next_attempt_at = ${nextAttemptAt}::timestamptz, lease_until = NULL,
          attempts = attempts + 1 WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie),
      markFailed: (id, at) =>
        sql`UPDATE hub.mail_outbox SET failed_at = ${at}::timestamptz, sealed = NULL, lease_until = NULL,
          attempts = attempts + 1 WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie),
      pendingCount: () =>
        sql<{ readonly count: number }>`SELECT count(*)::int AS count FROM hub.mail_outbox
          WHERE sent_at IS NULL AND failed_at IS NULL`.pipe(
          Effect.map((rows) => rows[0]?.count ?? 0),
          Effect.orDie
        )
    })
  })
)
