import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { SessionStore, type Session } from "../../../core/tasks/SessionStore.ts"

const SessionRow = Schema.Struct({
  hash: Schema.String,
  email: Schema.String,
  name: Schema.String,
  expires_at: Schema.Date
})

/** The SessionStore port over `tasks.sessions` (0004_sessions.ts). SQL failures are defects. */
export const SessionStoreSql: Layer.Layer<SessionStore, never, SqlClient.SqlClient> = Layer.effect(
  SessionStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const findRow = SqlSchema.findOneOption({
      Request: Schema.Struct({ hash: Schema.String, nowIso: Schema.String }),
      Result: SessionRow,
      execute: (r) => sql`
        SELECT hash, email, name, expires_at FROM tasks.sessions
        WHERE hash = ${r.hash} AND expires_at > ${r.nowIso}::timestamptz`
    })
    return SessionStore.of({
      create: Effect.fn("SessionStoreSql.create")(function* (session: Session) {
        yield* sql`
          INSERT INTO tasks.sessions (hash, email, name, expires_at)
          VALUES (${session.hash}, ${session.email}, ${session.name}, ${session.expiresAt}::timestamptz)
          ON CONFLICT (hash) DO UPDATE SET email = excluded.email, name = excluded.name, expires_at = excluded.expires_at`
      }, Effect.orDie),
      find: Effect.fn("SessionStoreSql.find")(function* (hash: string, nowIso: string) {
        const row = yield* findRow({ hash, nowIso })
        return Option.getOrUndefined(
          Option.map(row, (r): Session => ({
            hash: r.hash,
            email: r.email,
            name: r.name,
            expiresAt: r.expires_at.toISOString()
          }))
        )
      }, Effect.orDie),
      remove: Effect.fn("SessionStoreSql.remove")(function* (hash: string) {
        yield* sql`DELETE FROM tasks.sessions WHERE hash = ${hash}`
      }, Effect.orDie)
    })
  })
)
