import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { WebhookOutbox, type DeliveryResult, type WebhookDelivery } from "../../../core/decisions/WebhookOutbox.ts"
import { leaseClaims } from "../LeaseClaims.ts"

const Row = Schema.Struct({
  id: Schema.String,
  organization_id: Schema.String,
  webhook_id: Schema.String,
  decision_id: Schema.String,
  event_type: Schema.String,
  payload: Schema.String,
  status: Schema.Literals(["pending", "delivered", "failed", "skipped"]),
  attempts: Schema.Number,
  next_attempt_at: Schema.Date,
  created_at: Schema.Date,
  last_error: Schema.NullOr(Schema.String),
  last_status_code: Schema.NullOr(Schema.Number),
  completed_at: Schema.NullOr(Schema.Date)
})

const toDelivery = (row: typeof Row.Type): WebhookDelivery => ({
  id: row.id,
  organizationId: row.organization_id,
  webhookId: row.webhook_id,
  decisionId: row.decision_id,
  eventType: row.event_type,
  payload: row.payload,
  status: row.status,
  attempts: row.attempts,
  nextAttemptAt: row.next_attempt_at.toISOString(),
  createdAt: row.created_at.toISOString(),
  ...(row.last_error === null ? {} : { lastError: row.last_error }),
  ...(row.last_status_code === null ? {} : { lastStatusCode: row.last_status_code }),
  ...(row.completed_at === null ? {} : { completedAt: row.completed_at.toISOString() })
})

/**
 * The WebhookOutbox port over `decisions.webhook_deliveries` (0007_actions_and_outbox.ts); rows are
 * inserted by DecisionStoreSql's `save`. A claim is one UPDATE over rows locked with SKIP LOCKED, so
 * workers on several servers never claim the same delivery. SQL failures are defects.
 */
export const WebhookOutboxSql: Layer.Layer<WebhookOutbox, never, SqlClient.SqlClient> = Layer.effect(
  WebhookOutbox,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const claimRows = leaseClaims(sql, Row, ({ now, leaseUntil }) => ({
      table: sql`decisions.webhook_deliveries`,
      set: sql`next_attempt_at = ${leaseUntil}::timestamptz`,
      due: sql`status = 'pending' AND next_attempt_at <= ${now}::timestamptz`,
      order: sql`next_attempt_at, id`,
      returning: sql`*`
    }))

    const listRows = SqlSchema.findAll({
      Request: Schema.Struct({
        organizationId: Schema.String,
        webhookId: Schema.NullOr(Schema.String),
        limit: Schema.Int
      }),
      Result: Row,
      execute: ({ organizationId, webhookId, limit }) => sql`
        SELECT * FROM decisions.webhook_deliveries
        WHERE organization_id = ${organizationId} AND (${webhookId}::text IS NULL OR webhook_id = ${webhookId})
        ORDER BY id DESC LIMIT ${limit}`
    })

    const record = (id: string, result: DeliveryResult) => {
      switch (result._tag) {
        case "Delivered":
          return sql`UPDATE decisions.webhook_deliveries SET status = 'delivered', attempts = attempts + 1,
            completed_at = ${result.at}::timestamptz, last_status_code = ${result.statusCode}, last_error = NULL
            WHERE id = ${id}`
        case "Retry":
          return sql`UPDATE decisions.webhook_deliveries SET attempts = attempts + 1,
            next_attempt_at = ${result.nextAttemptAt}::timestamptz, last_error = ${result.error},
            last_status_code = ${result.statusCode ?? null}
            WHERE id = ${id}`
        case "GiveUp":
          return sql`UPDATE decisions.webhook_deliveries SET status = ${result.status}, attempts = attempts + 1,
            completed_at = ${result.at}::timestamptz, last_error = ${result.error},
            last_status_code = ${result.statusCode ?? null}
            WHERE id = ${id}`
      }
    }

    return WebhookOutbox.of({
      claimDue: (nowIso, leaseUntilIso, limit) =>
        claimRows({ now: nowIso, leaseUntil: leaseUntilIso, limit }).pipe(
          Effect.map((rows) => rows.map(toDelivery).sort((a, b) => (a.id < b.id ? -1 : 1))),
          Effect.orDie
        ),
      record: (id, result) => record(id, result).pipe(Effect.asVoid, Effect.orDie),
      list: (organizationId, options) =>
        listRows({ organizationId, webhookId: options.webhookId ?? null, limit: options.limit }).pipe(
          Effect.map((rows) => rows.map(toDelivery)),
          Effect.orDie
        )
    })
  })
)
