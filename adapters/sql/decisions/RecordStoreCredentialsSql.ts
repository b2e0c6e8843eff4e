import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { RecordStoreCredentials } from "../../../core/decisions/RecordStoreCredentials.ts"

const Row = Schema.Struct({
  organization_id: Schema.String,
  sealed_token: Schema.String,
  updated_by: Schema.String,
  updated_at: Schema.Date
})

/** The RecordStoreCredentials port over `decisions.record_store_credentials` (0007). SQL failures are defects. */
export const RecordStoreCredentialsSql: Layer.Layer<RecordStoreCredentials, never, SqlClient.SqlClient> = Layer.effect(
  RecordStoreCredentials,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const getRows = SqlSchema.findAll({
      Request: Schema.String,
      Result: Row,
      execute: (organizationId) =>
        sql`SELECT * FROM decisions.record_store_credentials WHERE organization_id = ${organizationId}`
    })
    return RecordStoreCredentials.of({
      put: (c) =>
        sql`INSERT INTO decisions.record_store_credentials (organization_id, sealed_token, updated_by, updated_at)
            VALUES (${c.organizationId}, ${c.sealedToken}, ${c.updatedBy}, ${c.updatedAt}::timestamptz)
            ON CONFLICT (organization_id) DO UPDATE SET sealed_token = EXCLUDED.sealed_token,
              updated_by = EXCLUDED.updated_by, updated_at = EXCLUDED.updated_at`.pipe(Effect.asVoid, Effect.orDie),
      get: (organizationId) =>
        getRows(organizationId).pipe(
          Effect.map((rows) => {
            const row = rows[0]
            return row === undefined
              ? undefined
              : {
                  organizationId: row.organization_id,
                  sealedToken: row.sealed_token,
                  updatedBy: row.updated_by,
                  updatedAt: row.updated_at.toISOString()
                }
          }),
          Effect.orDie
        ),
      remove: (organizationId) =>
        sql`DELETE FROM decisions.record_store_credentials WHERE organization_id = ${organizationId}
            RETURNING organization_id`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie
        )
    })
  })
)
