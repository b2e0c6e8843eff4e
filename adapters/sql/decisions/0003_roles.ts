import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/**
 * `decisions.roles` and `decisions.role_assignments`: decision roles, one slug per organization, and who holds
 * them. Slugs and emails sort in "C" collation (byte order), the order the memory adapter answers, whatever
 * the database's locale. Emails are stored as the core passes them (normalised).
 */
export const rolesTables: Migration = {
  id: 3,
  name: "roles",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE decisions.roles (
      organization_id text NOT NULL,
      slug text COLLATE "C" NOT NULL,
      id text NOT NULL UNIQUE,
      name text NOT NULL,
      description text NULL,
      created_at timestamptz NOT NULL,
      archived_at timestamptz NULL,
      PRIMARY KEY (organization_id, slug)
    )`
    yield* sql`CREATE TABLE decisions.role_assignments (
      organization_id text NOT NULL,
      slug text COLLATE "C" NOT NULL,
      member_email text COLLATE "C" NOT NULL,
      added_by text NOT NULL,
      added_at timestamptz NOT NULL,
      PRIMARY KEY (organization_id, slug, member_email),
      FOREIGN KEY (organization_id, slug) REFERENCES decisions.roles (organization_id, slug) ON DELETE CASCADE
    )`
    // heldBy: the roles one member holds in an organization.
    yield* sql`CREATE INDEX role_assignments_member ON decisions.role_assignments (organization_id, member_email)`
  })
}
