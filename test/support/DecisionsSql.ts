import { Layer } from "effect"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { decisionsMigrations } from "../../adapters/sql/decisions/migrations.ts"
import { TransactionsSql } from "../../adapters/sql/TransactionsSql.ts"
import { DecisionsDataSql } from "../../apps/server/decisions/DecisionsData.ts"
import { DecisionsUseCases } from "../../apps/server/decisions/DecisionsLayers.ts"
import type { RecordUpdater } from "../../core/decisions/RecordUpdater.ts"
import type { SqlBackend } from "./Databases.ts"
import { testDecisionsSettings, testOutbound } from "./DecisionsMemory.ts"

/** The decisions use cases and the idempotency store over the SQL adapters, on a fresh migrated database. */
export const decisionsSqlOn = (backend: SqlBackend, updater?: Layer.Layer<RecordUpdater, never, never>) =>
  DecisionsUseCases(testDecisionsSettings, {
    data: DecisionsDataSql.pipe(Layer.provideMerge(TransactionsSql)),
    ...testOutbound(updater)
  }).pipe(Layer.provide(migrationsLayer("decisions", decisionsMigrations)), Layer.provide(backend.layer))
