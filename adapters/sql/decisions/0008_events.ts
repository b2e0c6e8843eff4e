import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/**
 * What the decisions service tells the hub (docs/notifications.md, "What services emit").
 *
 * - `event_outbox`: events for the hub, written in the transaction of the change that implies them and
 *   relayed by adapters/sql/ProducerOutboxSql.ts; the same shape as the task inbox's `tasks.outbox`. A row
 *   is pending while `delivered_at` and `failed_at` are both NULL; `next_attempt_at` is when it is due
 *   (NULL: at once), or the end of a relay's lease while one sends it.
 * - `organization_admins`: the organization admins the workspace plane has shown us (an identity token's
 *   `orgRole` OWNER or ADMIN), told when a decision is unrouted or a record action is dead-lettered. A
 *   token that shows someone is no longer an admin removes them.
 */
export const eventsTables: Migration = {
  id: 8,
  name: "events",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE decisions.event_outbox (
      id text COLLATE "C" PRIMARY KEY,
      event jsonb NOT NULL,
      delivered_at timestamptz NULL,
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NULL,
      failed_at timestamptz NULL,
      last_error text NULL,
      last_status_code integer NULL
    )`
    yield* sql`CREATE INDEX event_outbox_pending ON decisions.event_outbox (id)
      WHERE delivered_at IS NULL AND failed_at IS NULL`
    yield* sql`CREATE TABLE decisions.organization_admins (
      organization_id text NOT NULL,
      email text NOT NULL,
      seen_at timestamptz NOT NULL,
      PRIMARY KEY (organization_id, email)
    )`
  })
}
