import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { WebhookStore, type StoredWebhook } from "../../../core/decisions/WebhookStore.ts"

const Row = Schema.Struct({
  id: Schema.String,
  organization_id: Schema.String,
  url: Schema.String,
  sealed_secret: Schema.String,
  created_at: Schema.Date,
  disabled_at: Schema.NullOr(Schema.Date)
})

const toWebhook = (row: typeof Row.Type): StoredWebhook => ({
  id: row.id,
  organizationId: row.organization_id,
  url: row.url,
  sealedSecret: row.sealed_secret,
  createdAt: row.created_at.toISOString(),
  ...(row.disabled_at === null ? {} : { disabledAt: row.disabled_at.toISOString() })
})

/** The WebhookStore port over `decisions.webhooks` (0006_webhooks.ts). SQL failures are defects. */
export const WebhookStoreSql: Layer.Layer<WebhookStore, never, SqlClient.SqlClient> = Layer.effect(
  WebhookStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const listRows = SqlSchema.findAll({
      Request: Schema.String,
      Result: Row,
      execute: (organizationId) =>
        sql`SELECT * FROM decisions.webhooks WHERE organization_id = ${organizationId} ORDER BY id DESC`
    })
    const getRows = SqlSchema.findAll({
      Request: Schema.Struct({ organizationId: Schema.String, id: Schema.String }),
      Result: Row,
      execute: ({ organizationId, id }) =>
        sql`SELECT * FROM decisions.webhooks WHERE id = ${id} AND organization_id = ${organizationId}`
    })
    const disableRows = SqlSchema.findAll({
      Request: Schema.Struct({ organizationId: Schema.String, id: Schema.String, at: Schema.String }),
      Result: Row,
      execute: ({ organizationId, id, at }) =>
        sql`UPDATE decisions.webhooks SET disabled_at = COALESCE(disabled_at, ${at}::timestamptz)
            WHERE id = ${id} AND organization_id = ${organizationId} RETURNING *`
    })
    return WebhookStore.of({
      create: (w) =>
        sql`INSERT INTO decisions.webhooks (id, organization_id, url, sealed_secret, created_at, disabled_at)
            VALUES (${w.id}, ${w.organizationId}, ${w.url}, ${w.sealedSecret}, ${w.createdAt}::timestamptz,
              ${w.disabledAt ?? null}::timestamptz)`.pipe(Effect.asVoid, Effect.orDie),
      list: (organizationId) =>
        listRows(organizationId).pipe(
          Effect.map((rows) => rows.map(toWebhook)),
          Effect.orDie
        ),
      get: (organizationId, id) =>
        getRows({ organizationId, id }).pipe(
          Effect.map((rows) => (rows[0] === undefined ? undefined : toWebhook(rows[0]))),
          Effect.orDie
        ),
      disable: (organizationId, id, at) =>
        disableRows({ organizationId, id, at }).pipe(
          Effect.map((rows) => (rows[0] === undefined ? undefined : toWebhook(rows[0]))),
          Effect.orDie
        )
    })
  })
)
