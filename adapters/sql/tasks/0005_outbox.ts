import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/** `tasks.outbox`: events for the hub, by their ULID, with when they were delivered (NULL until then). */
export const outboxTable: Migration = {
  id: 5,
  name: "outbox",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE tasks.outbox (
      id text COLLATE "C" PRIMARY KEY,
      event jsonb NOT NULL,
      delivered_at timestamptz NULL
    )`
    yield* sql`CREATE INDEX outbox_pending ON tasks.outbox (id) WHERE delivered_at IS NULL`
  })
}
