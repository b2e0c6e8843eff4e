import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/**
 * Escalation ladders (core/decisions/Escalation.ts):
 *
 * - `decisions.decisions.escalation_due_at`: when the decision's next escalation step is due, rewritten from
 *   `doc` on every write (`escalationDueAt`); null when no step will run (none left, the decision closed, or
 *   the step would come at or after the expiry). `decisions_escalation_due` serves the worker's claim, so it
 *   reads only the decisions it may have to escalate.
 * - `decisions.roles.escalation`: a role's default ladder for its decisions created without one.
 */
export const escalationColumns: Migration = {
  id: 12,
  name: "escalation",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE decisions.decisions ADD COLUMN escalation_due_at timestamptz NULL`
    yield* sql`CREATE INDEX decisions_escalation_due ON decisions.decisions (escalation_due_at)
      WHERE escalation_due_at IS NOT NULL`
    yield* sql`ALTER TABLE decisions.roles ADD COLUMN escalation jsonb NULL`
  })
}
