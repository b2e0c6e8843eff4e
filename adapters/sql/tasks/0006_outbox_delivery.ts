import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/**
 * Delivery state of `tasks.outbox` for the relay to the hub (core/events/ProducerRelay.ts): attempts so far,
 * `next_attempt_at` (NULL: due at once; while a relay sends the event, the end of its lease), the last
 * error and status code, and `failed_at` for an event the hub refused for good. An event is pending while
 * both `delivered_at` and `failed_at` are NULL.
 */
export const outboxDelivery: Migration = {
  id: 6,
  name: "outbox_delivery",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE tasks.outbox
      ADD COLUMN attempts integer NOT NULL DEFAULT 0,
      ADD COLUMN next_attempt_at timestamptz NULL,
      ADD COLUMN failed_at timestamptz NULL,
      ADD COLUMN last_error text NULL,
      ADD COLUMN last_status_code integer NULL`
    yield* sql`DROP INDEX tasks.outbox_pending`
    yield* sql`CREATE INDEX outbox_pending ON tasks.outbox (id) WHERE delivered_at IS NULL AND failed_at IS NULL`
  })
}
