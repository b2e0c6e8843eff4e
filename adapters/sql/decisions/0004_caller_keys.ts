import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/**
 * `decisions.caller_keys`: caller keys (`dcd_…`) by the hash of the key, never the key itself. A hash names
 * one key; `id` sorts in "C" collation so lists are newest first as ULIDs order in JavaScript.
 */
export const callerKeysTable: Migration = {
  id: 4,
  name: "caller_keys",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE decisions.caller_keys (
      id text COLLATE "C" PRIMARY KEY,
      organization_id text NOT NULL,
      name text NOT NULL,
      key_prefix text NOT NULL,
      hash text NOT NULL UNIQUE,
      created_by text NOT NULL,
      created_at timestamptz NOT NULL,
      last_used_at timestamptz NULL,
      revoked_at timestamptz NULL
    )`
    yield* sql`CREATE INDEX caller_keys_newest ON decisions.caller_keys (organization_id, id DESC)`
  })
}
