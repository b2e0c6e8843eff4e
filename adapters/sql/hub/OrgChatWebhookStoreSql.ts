import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { OrgChatWebhookStore, type OrgChatWebhook } from "../../../core/hub/OrgChatWebhooks.ts"

const Row = Schema.Struct({
  org_id: Schema.String,
  url: Schema.String,
  host: Schema.String,
  updated_at: Schema.Date
})

const toWebhook = (row: typeof Row.Type): OrgChatWebhook => ({
  orgId: row.org_id,
  sealedUrl: row.url,
  host: row.host,
  updatedAt: row.updated_at.toISOString()
})

/** The OrgChatWebhookStore port over `hub.org_chat_webhooks` (0011_org_chat_webhooks.ts). SQL failures are defects. */
export const OrgChatWebhookStoreSql: Layer.Layer<OrgChatWebhookStore, never, SqlClient.SqlClient> = Layer.effect(
  OrgChatWebhookStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const byOrg = SqlSchema.findAll({
      Request: Schema.String,
      Result: Row,
      execute: (orgId) => sql`SELECT * FROM hub.org_chat_webhooks WHERE org_id = ${orgId}`
    })
    const byOrgs = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: Row,
      execute: (orgIds) => sql`SELECT * FROM hub.org_chat_webhooks
        WHERE org_id IN (SELECT jsonb_array_elements_text(${JSON.stringify(orgIds)}::jsonb))`
    })
    return OrgChatWebhookStore.of({
      find: (orgId) =>
        byOrg(orgId).pipe(
          Effect.map((rows) => (rows[0] === undefined ? undefined : toWebhook(rows[0]))),
          Effect.orDie
        ),
      findAll: (orgIds) =>
        orgIds.length === 0
          ? Effect.succeed([])
          : byOrgs(orgIds).pipe(
              Effect.map((rows) => rows.map(toWebhook)),
              Effect.orDie
            ),
      save: (w) =>
        sql`
          INSERT INTO hub.org_chat_webhooks (org_id, url, host, updated_at)
          VALUES (${w.orgId}, ${w.sealedUrl}, ${w.host}, ${w.updatedAt}::timestamptz)
          ON CONFLICT (org_id) DO UPDATE SET url = EXCLUDED.url, host = EXCLUDED.host, updated_at = EXCLUDED.updated_at`.pipe(
          Effect.asVoid,
          Effect.orDie
        ),
      remove: (orgId) =>
        sql<{
          readonly org_id: string
        }>`DELETE FROM hub.org_chat_webhooks WHERE org_id = ${orgId} RETURNING org_id`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie
        )
    })
  })
)
