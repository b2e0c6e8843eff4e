import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/**
 * What a service learned from the hub's `organization.status.changed` facts (OrganizationStatusesSql): the
 * newest status heard of each organization, and the people heard of as its members. The decisions service
 * (0011) and the task inbox (0007) list it among their migrations, each in its own schema.
 */
export const organizationStatusesMigration = (schema: string, id: number): Migration => ({
  id,
  name: "organization_statuses",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE ${sql(schema)}.organization_statuses (
      organization_id text COLLATE "C" PRIMARY KEY,
      status text NOT NULL CHECK (status IN ('active', 'archived', 'merged', 'deleted')),
      changed_at timestamptz NOT NULL
    )`
    yield* sql`CREATE TABLE ${sql(schema)}.organization_members (
      email text COLLATE "C" NOT NULL,
      organization_id text COLLATE "C" NOT NULL,
      PRIMARY KEY (email, organization_id)
    )`
  })
})
