import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/**
 * Guarded writes to an upstream record store without transactions (core/tasks/RecordWriteGuards.ts, RecordWriteGuardsSql.ts):
 * `tasks.record_locks`, one row per guarded record, locked (`FOR UPDATE`) for the whole of a write to that
 * record, so that writers on every instance take turns; and `tasks.record_write_notes`, the write in progress
 * on a record (its guarded update and following write as JSON), committed before its first upstream write
 * and removed after its last, so that a write a crash left half done is finished by the next writer.
 */
export const recordGuards: Migration = {
  id: 8,
  name: "record_guards",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE tasks.record_locks (
      table_name text NOT NULL,
      record_id text NOT NULL,
      PRIMARY KEY (table_name, record_id)
    )`
    yield* sql`CREATE TABLE tasks.record_write_notes (
      table_name text NOT NULL,
      record_id text NOT NULL,
      note jsonb NOT NULL,
      noted_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (table_name, record_id)
    )`
  })
}
