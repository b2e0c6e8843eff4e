import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { McpSessionStore } from "../../../core/decisions/McpSessionStore.ts"

const Row = Schema.Struct({
  id_hash: Schema.String,
  key_id: Schema.String,
  protocol_version: Schema.String,
  initialize: Schema.Unknown,
  last_seen_at: Schema.Date
})

const at = (millis: number) => new Date(millis).toISOString()

/** The McpSessionStore port over `decisions.mcp_sessions` (0010). SQL failures are defects. */
export const McpSessionStoreSql: Layer.Layer<McpSessionStore, never, SqlClient.SqlClient> = Layer.effect(
  McpSessionStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const useRows = SqlSchema.findAll({
      Request: Schema.Struct({
        idHash: Schema.String,
        keyId: Schema.String,
        idleSince: Schema.Number,
        now: Schema.Number
      }),
      Result: Row,
      execute: ({ idHash, keyId, idleSince, now }) =>
        sql`UPDATE decisions.mcp_sessions SET last_seen_at = GREATEST(last_seen_at, ${at(now)}::timestamptz)
            WHERE id_hash = ${idHash} AND key_id = ${keyId} AND last_seen_at > ${at(idleSince)}::timestamptz
            RETURNING *`
    })
    return McpSessionStore.of({
      open: (session, maxPerKey) =>
        sql
          .withTransaction(
            Effect.gen(function* () {
              yield* sql`INSERT INTO decisions.mcp_sessions (id_hash, key_id, protocol_version, initialize, last_seen_at)
                VALUES (${session.idHash}, ${session.keyId}, ${session.protocolVersion},
                  ${JSON.stringify(session.initialize)}::jsonb, ${at(session.lastSeenAt)}::timestamptz)`
              yield* sql`DELETE FROM decisions.mcp_sessions WHERE id_hash IN (
                SELECT id_hash FROM decisions.mcp_sessions WHERE key_id = ${session.keyId} AND id_hash <> ${session.idHash}
                ORDER BY last_seen_at DESC, id_hash OFFSET ${Math.max(maxPerKey - 1, 0)})`
            })
          )
          .pipe(Effect.asVoid, Effect.orDie),
      use: (idHash, keyId, idleSince, now) =>
        useRows({ idHash, keyId, idleSince, now }).pipe(
          Effect.map((rows) => {
            const row = rows[0]
            return row === undefined
              ? undefined
              : {
                  idHash: row.id_hash,
                  keyId: row.key_id,
                  protocolVersion: row.protocol_version,
                  initialize: row.initialize,
                  lastSeenAt: row.last_seen_at.getTime()
                }
          }),
          Effect.orDie
        ),
      end: (idHash, keyId) =>
        sql`DELETE FROM decisions.mcp_sessions WHERE id_hash = ${idHash} AND key_id = ${keyId} RETURNING id_hash`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie
        ),
      purgeIdle: (idleSince) =>
        sql`DELETE FROM decisions.mcp_sessions WHERE last_seen_at <= ${at(idleSince)}::timestamptz`.pipe(
          Effect.asVoid,
          Effect.orDie
        )
    })
  })
)
