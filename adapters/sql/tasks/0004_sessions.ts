import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/** `tasks.sessions`: web sessions by the hash of the cookie value. */
export const sessionsTable: Migration = {
  id: 4,
  name: "sessions",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE tasks.sessions (
      hash text PRIMARY KEY,
      email text NOT NULL,
      name text NOT NULL,
      expires_at timestamptz NOT NULL
    )`
  })
}
