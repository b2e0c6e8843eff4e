import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/**
 * Record actions and the webhook outbox.
 *
 * - `decisions.action_due_at`: when the earliest of a decision's actions may run
 *   (core/decisions/DecisionAction.ts `actionsDueAt`), null when none will; `actions_waiting`: an action
 *   waits for the organization's record-store credentials. Both are rewritten from `doc` on every write.
 * - `webhook_deliveries`: the outbox. A row is inserted in the transaction that changes the decision;
 *   `next_attempt_at` is when it is due, or the end of a worker's lease while one sends it.
 * - `record_store_credentials`: one sealed token per organization (never in plain text).
 */
export const actionsAndOutbox: Migration = {
  id: 7,
  name: "actions_and_outbox",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE decisions.decisions
      ADD COLUMN action_due_at timestamptz NULL,
      ADD COLUMN actions_waiting boolean NOT NULL DEFAULT false`
    yield* sql`CREATE INDEX decisions_actions_due ON decisions.decisions (action_due_at)
      WHERE action_due_at IS NOT NULL`
    yield* sql`CREATE INDEX decisions_actions_waiting ON decisions.decisions (organization_id) WHERE actions_waiting`
    yield* sql`CREATE TABLE decisions.webhook_deliveries (
      id text COLLATE "C" PRIMARY KEY,
      organization_id text NOT NULL,
      webhook_id text NOT NULL,
      decision_id text NOT NULL,
      event_type text NOT NULL,
      payload text NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'skipped')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL,
      last_error text NULL,
      last_status_code integer NULL,
      completed_at timestamptz NULL
    )`
    yield* sql`CREATE INDEX webhook_deliveries_due ON decisions.webhook_deliveries (next_attempt_at)
      WHERE status = 'pending'`
    yield* sql`CREATE INDEX webhook_deliveries_newest ON decisions.webhook_deliveries (organization_id, id DESC)`
    yield* sql`CREATE TABLE decisions.record_store_credentials (
      organization_id text PRIMARY KEY,
      sealed_token text NOT NULL,
      updated_by text NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  })
}
