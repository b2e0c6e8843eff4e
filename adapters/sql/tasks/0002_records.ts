import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/**
 * `tasks.records`: the record store of the task inbox when it is kept in Postgres (RecordStoreSql), one row
 * per record of any table, its fields as jsonb, as an upstream record store keeps them. `seq` orders records
 * by creation (selections answer newest first); the GIN index serves the `@>` tests queries compile to.
 */
export const recordsTable: Migration = {
  id: 2,
  name: "records",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE tasks.records (
      seq bigserial PRIMARY KEY,
      table_name text NOT NULL,
      id text COLLATE "C" NOT NULL UNIQUE,
      created_at timestamptz NOT NULL,
      fields jsonb NOT NULL
    )`
    yield* sql`CREATE INDEX records_newest ON tasks.records (table_name, seq DESC)`
    yield* sql`CREATE INDEX records_fields ON tasks.records USING gin (fields jsonb_path_ops)`
  })
}
