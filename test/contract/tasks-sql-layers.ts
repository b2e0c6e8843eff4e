import { Layer } from "effect"
import type { DatabaseServices } from "../../adapters/sql/Database.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { tasksMigrations } from "../../adapters/sql/tasks/migrations.ts"
import type { SqlBackend } from "../support/Databases.ts"

/** A task inbox SQL adapter on a freshly migrated `tasks` schema of the backend's fresh database. */
export const tasksSqlOn = <A>(
  adapter: Layer.Layer<A, never, DatabaseServices>,
  backend: SqlBackend
): Layer.Layer<A, unknown> =>
  adapter.pipe(Layer.provide(migrationsLayer("tasks", tasksMigrations)), Layer.provide(backend.layer))
