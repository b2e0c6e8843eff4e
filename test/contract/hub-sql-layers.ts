import { Layer } from "effect"
import { hubMigrations } from "../../adapters/sql/hub/migrations.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import type { DatabaseServices } from "../../adapters/sql/Database.ts"
import type { SqlBackend } from "../support/Databases.ts"

/** A hub SQL adapter on a freshly migrated `hub` schema of the backend's fresh database. */
export const hubSqlOn = <A>(
  adapter: Layer.Layer<A, never, DatabaseServices>,
  backend: SqlBackend
): Layer.Layer<A, unknown> =>
  adapter.pipe(Layer.provide(migrationsLayer("hub", hubMigrations)), Layer.provide(backend.layer))
