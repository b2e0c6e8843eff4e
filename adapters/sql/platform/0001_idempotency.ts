import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/**
 * `<schema>.idempotency_keys`, the table of IdempotencyStoreSql. Every service schema (hub, decisions, tasks)
 * lists it among its migrations: each service keeps its own keys. Times are epoch milliseconds from the
 * caller's Clock, as the port passes them, so expiry follows the same clock in tests and in production.
 */
export const idempotencyMigration = (schema: string, id = 1): Migration => ({
  id,
  name: "idempotency_keys",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE ${sql(schema)}.idempotency_keys (
      scope text NOT NULL,
      key text NOT NULL,
      fingerprint text NOT NULL,
      status text NOT NULL CHECK (status IN ('running', 'done')),
      response_status integer NULL,
      response_content_type text NULL,
      response_body text NULL,
      created_at_ms bigint NOT NULL,
      expires_at_ms bigint NOT NULL,
      PRIMARY KEY (scope, key),
      CHECK (status = 'running' OR (response_status IS NOT NULL AND response_content_type IS NOT NULL
        AND response_body IS NOT NULL))
    )`
    yield* sql`CREATE INDEX idempotency_keys_expires_at_ms ON ${sql(schema)}.idempotency_keys (expires_at_ms)`
  })
})
