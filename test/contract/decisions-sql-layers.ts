import { Layer } from "effect"
import type { DatabaseServices } from "../../adapters/sql/Database.ts"
import { decisionsMigrations } from "../../adapters/sql/decisions/migrations.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import type { SqlBackend } from "../support/Databases.ts"

/** A decisions SQL adapter on a freshly migrated `decisions` schema of the backend's fresh database. */
export const decisionsSqlOn = <A>(
  adapter: Layer.Layer<A, never, DatabaseServices>,
  backend: SqlBackend
): Layer.Layer<A, unknown> =>
  adapter.pipe(Layer.provide(migrationsLayer("decisions", decisionsMigrations)), Layer.provide(backend.layer))
