import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/**
 * `decisions.decisions`: each decision whole in `doc` (decoded with the Decision schema on read), beside the
 * scalar columns that lists, inbox scopes and the expiry sweep filter and sort on. `doc` is the truth; the
 * columns are rewritten from it on every write.
 *
 * - `id` sorts in "C" collation, byte order, so "newest first" and the `afterId` cursor order ULIDs as the
 *   memory adapter does (JavaScript string order), whatever the database's locale.
 * - `direct_assignee_email` holds the normalised email (trimmed, lower case), so the inbox matches its owner
 *   the way `emailsEqual` does; `doc` keeps the email as given.
 * - `expires_at` is the instant of `doc.expiresAt` in milliseconds, as `Date.parse` reads it.
 * - `decisions_due` serves `due`: only open decisions with an expiry are in it, so the sweep reads just the
 *   decisions it may have to expire.
 */
export const decisionsTable: Migration = {
  id: 2,
  name: "decisions",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE decisions.decisions (
      id text COLLATE "C" PRIMARY KEY,
      organization_id text NOT NULL,
      role_slug text NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'needs_info', 'resolved', 'expired', 'cancelled')),
      direct_assignee_email text NULL,
      expires_at timestamptz NULL,
      created_at timestamptz NOT NULL,
      version integer NOT NULL,
      doc jsonb NOT NULL
    )`
    yield* sql`CREATE INDEX decisions_newest ON decisions.decisions (organization_id, id DESC)`
    yield* sql`CREATE INDEX decisions_due ON decisions.decisions (expires_at)
      WHERE status IN ('pending', 'needs_info') AND expires_at IS NOT NULL`
  })
}
