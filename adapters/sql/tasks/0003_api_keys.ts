import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/** `tasks.api_keys`: users' API keys (`tsk_…`) by the hash of the key, never the key itself. */
export const apiKeysTable: Migration = {
  id: 3,
  name: "api_keys",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE tasks.api_keys (
      id text COLLATE "C" PRIMARY KEY,
      user_id text NOT NULL,
      name text NOT NULL,
      key_prefix text NOT NULL,
      hash text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL,
      last_used_at timestamptz NULL,
      revoked_at timestamptz NULL
    )`
    yield* sql`CREATE INDEX api_keys_user ON tasks.api_keys (user_id, id DESC)`
  })
}
