import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/**
 * Identity and entitlements (core/hub/Directory.ts), the uniqueness rules held by the database itself:
 *
 * - `orgs`: status is derived (core/hub/Directory.ts `orgStatus`), so only its timestamps are stored.
 * - `users`: the email is stored normalised by the core and unique here, so two racing sign-ups of one
 *   address cannot both succeed.
 * - `memberships`: one per (org, user); `position` keeps the order of insertion among memberships created in
 *   the same millisecond ("oldest membership first"). A department role needs a department.
 * - `installations`: one per (org, app); `epoch` is unix seconds.
 * - `flags`: one setting per (flag, organization), the global one having no organization.
 * - `preferences`: one document per user.
 *
 * No foreign keys: the use cases check that an org and a user exist before linking them, and organizations and users are never
 * removed (a deleted organization keeps its row), so the port behaves the same here as in memory.
 */
export const directoryTables: Migration = {
  id: 2,
  name: "directory",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE hub.orgs (
      id text COLLATE "C" PRIMARY KEY,
      name text NOT NULL,
      tier text NOT NULL CHECK (tier IN ('free', 'hourly', 'monthly')),
      created_at timestamptz NOT NULL,
      archived_at timestamptz NULL,
      merged_into_org_id text NULL,
      deleted_at timestamptz NULL
    )`
    yield* sql`CREATE TABLE hub.users (
      id text COLLATE "C" PRIMARY KEY,
      email text COLLATE "C" NOT NULL UNIQUE,
      name text NULL,
      verified boolean NOT NULL,
      created_at timestamptz NOT NULL
    )`
    yield* sql`CREATE TABLE hub.memberships (
      org_id text COLLATE "C" NOT NULL,
      user_id text COLLATE "C" NOT NULL,
      role text NOT NULL CHECK (role IN ('OWNER', 'ADMIN', 'MEMBER', 'VIEWER')),
      department jsonb NULL,
      department_role jsonb NULL,
      departments jsonb NOT NULL,
      roles jsonb NOT NULL,
      created_at timestamptz NOT NULL,
      position bigint GENERATED ALWAYS AS IDENTITY,
      PRIMARY KEY (org_id, user_id),
      CHECK (department_role IS NULL OR department IS NOT NULL)
    )`
    yield* sql`CREATE INDEX memberships_by_user ON hub.memberships (user_id)`
    yield* sql`CREATE TABLE hub.installations (
      org_id text COLLATE "C" NOT NULL,
      service_id text COLLATE "C" NOT NULL,
      active boolean NOT NULL,
      epoch bigint NOT NULL,
      consents jsonb NOT NULL,
      permissions jsonb NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (org_id, service_id)
    )`
    yield* sql`CREATE TABLE hub.flags (
      name text NOT NULL,
      org_id text NULL,
      enabled boolean NOT NULL
    )`
    yield* sql`CREATE UNIQUE INDEX flags_one_per_scope ON hub.flags (name, (COALESCE(org_id, '')))`
    yield* sql`CREATE TABLE hub.preferences (
      user_id text COLLATE "C" PRIMARY KEY,
      doc jsonb NOT NULL
    )`
  })
}
