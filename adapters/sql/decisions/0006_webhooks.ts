import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/** `decisions.webhooks`: endpoints with their signing secret sealed (never in plain text). */
export const webhooksTable: Migration = {
  id: 6,
  name: "webhooks",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE decisions.webhooks (
      id text COLLATE "C" PRIMARY KEY,
      organization_id text NOT NULL,
      url text NOT NULL,
      sealed_secret text NOT NULL,
      created_at timestamptz NOT NULL,
      disabled_at timestamptz NULL
    )`
    yield* sql`CREATE INDEX webhooks_newest ON decisions.webhooks (organization_id, id DESC)`
  })
}
