import { Layer } from "effect"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { decisionsMigrations } from "../../adapters/sql/decisions/migrations.ts"
import { IdempotencyStoreSql } from "../../adapters/sql/IdempotencyStoreSql.ts"
import { TransactionsSql } from "../../adapters/sql/TransactionsSql.ts"
import { DecisionsDataSql } from "../../apps/server/DecisionsData.ts"
import { Decisions } from "../../core/decisions/Decisions.ts"
import { Templates } from "../../core/decisions/Templates.ts"
import { DecisionPages } from "../../core/decisions/pages/DecisionPages.ts"
import { IdGeneratorUlid } from "../../core/kernel/Ids.ts"
import type { RecordUpdater } from "../../core/decisions/RecordUpdater.ts"
import type { SqlBackend } from "./Databases.ts"
import { testWebhooks, testWorkers } from "./DecisionsMemory.ts"

/** The decisions use cases and the idempotency store over the SQL adapters, on a fresh migrated database. */
export const decisionsSqlOn = (backend: SqlBackend, updater?: Layer.Layer<RecordUpdater, never, never>) =>
  DecisionPages.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(Templates.layer, testWebhooks, testWorkers(updater))),
    Layer.provideMerge(Decisions.layer),
    Layer.provideMerge(Layer.merge(DecisionsDataSql, IdGeneratorUlid)),
    Layer.provideMerge(Layer.merge(IdempotencyStoreSql("decisions"), TransactionsSql)),
    Layer.provide(migrationsLayer("decisions", decisionsMigrations)),
    Layer.provide(backend.layer)
  )
