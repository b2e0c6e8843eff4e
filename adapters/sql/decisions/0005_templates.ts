import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/** `decisions.templates`: each template whole in `doc`, keyed by (organization, slug). */
export const templatesTable: Migration = {
  id: 5,
  name: "templates",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE decisions.templates (
      organization_id text NOT NULL,
      slug text COLLATE "C" NOT NULL,
      doc jsonb NOT NULL,
      PRIMARY KEY (organization_id, slug)
    )`
  })
}
