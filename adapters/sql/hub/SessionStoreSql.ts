import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { SessionStore, type SessionRecord } from "../../../core/hub/Sessions.ts"

const Row = Schema.Struct({
  id: Schema.String,
  id_hash: Schema.String,
  user_id: Schema.String,
  created_at: Schema.Date,
  last_seen_at: Schema.Date,
  expires_at: Schema.Date
})

const toRecord = (row: typeof Row.Type): SessionRecord => ({
  id: row.id,
  idHash: row.id_hash,
  userId: row.user_id,
  createdAt: row.created_at.toISOString(),
  lastSeenAt: row.last_seen_at.toISOString(),
  expiresAt: row.expires_at.toISOString()
})

/** The SessionStore port over `hub.sessions` (0006_sign_in.ts). SQL failures are defects. */
export const SessionStoreSql: Layer.Layer<SessionStore, never, SqlClient.SqlClient> = Layer.effect(
  SessionStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const byHash = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: Row,
      execute: (idHash) => sql`SELECT * FROM hub.sessions WHERE id_hash = ${idHash}`
    })
    return SessionStore.of({
      create: (s) =>
        sql`INSERT INTO hub.sessions (id_hash, id, user_id, created_at, last_seen_at, expires_at)
          VALUES (${s.idHash}, ${s.id}, ${s.userId}, ${s.createdAt}::timestamptz, ${s.lastSeenAt}::timestamptz,
            ${s.expiresAt}::timestamptz)`.pipe(Effect.asVoid, Effect.orDie),
      find: (idHash) =>
        byHash(idHash).pipe(
          Effect.map((row) => (row._tag === "Some" ? toRecord(row.value) : undefined)),
          Effect.orDie
        ),
      touch: (idHash, lastSeenAt) =>
        sql`UPDATE hub.sessions SET last_seen_at = ${lastSeenAt}::timestamptz
          WHERE id_hash = ${idHash} AND last_seen_at < ${lastSeenAt}::timestamptz`.pipe(Effect.asVoid, Effect.orDie),
      remove: (idHash) =>
        sql<{ readonly id: string }>`DELETE FROM hub.sessions WHERE id_hash = ${idHash} RETURNING id`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie
        ),
      purge: (idleBefore, now) =>
        sql<{ readonly id: string }>`DELETE FROM hub.sessions
          WHERE last_seen_at < ${idleBefore}::timestamptz OR expires_at <= ${now}::timestamptz RETURNING id`.pipe(
          Effect.map((rows) => rows.length),
          Effect.orDie
        )
    })
  })
)
