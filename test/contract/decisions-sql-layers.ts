import { Layer } from "effect"
import type { SqlClient } from "effect/sql"
import { decisionsMigrations } from "../../adapters/sql/decisions/migrations.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import type { SqlBackend } from "../support/Databases.ts"

/** A decisions SQL adapter on a freshly migrated `decisions` schema of the backend's fresh database. */
export const decisionsSqlOn = <A>(
  adapter: Layer.Layer<A, never, SqlClient.SqlClient>,
  backend: SqlBackend
): Layer.Layer<A, unknown> =>
  adapter.pipe(Layer.provide(migrationsLayer("decisions", decisionsMigrations)), Layer.provide(backend.layer))
