import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/**
 * The hub's outbox of facts for services (core/hub/HubFacts.ts), relayed by adapters/sql/ProducerOutboxSql.ts:
 * the same shape as a producer's event outbox. A row is pending while `delivered_at` and `failed_at` are both
 * NULL; `next_attempt_at` is when it is due (NULL: at once), or the end of a relay's lease while one sends it.
 */
export const factOutboxMigration: Migration = {
  id: 17,
  name: "fact_outbox",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE hub.fact_outbox (
      id text COLLATE "C" PRIMARY KEY,
      event jsonb NOT NULL,
      delivered_at timestamptz NULL,
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NULL,
      failed_at timestamptz NULL,
      last_error text NULL,
      last_status_code integer NULL
    )`
    yield* sql`CREATE INDEX fact_outbox_pending ON hub.fact_outbox (id) WHERE delivered_at IS NULL AND failed_at IS NULL`
  })
}
