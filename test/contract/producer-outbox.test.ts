import { Layer } from "effect"
import { ProducerOutboxMemory } from "../../adapters/memory/ProducerOutboxMemory.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { hubMigrations } from "../../adapters/sql/hub/migrations.ts"
import { ProducerOutboxSql } from "../../adapters/sql/ProducerOutboxSql.ts"
import { DecisionsOutboxSql } from "../../apps/server/decisions/DecisionsData.ts"
import { TasksOutboxSql } from "../../apps/server/tasks/TasksRuntime.ts"
import { sqlBackendsBothWays } from "../support/Databases.ts"
import { decisionsSqlOn } from "./decisions-sql-layers.ts"
import { ProducerOutboxContract } from "./ProducerOutbox.contract.ts"
import { tasksSqlOn } from "./tasks-sql-layers.ts"

// One outbox port for every producer: in memory, and over each service's own table on both databases; the
// hub's outbox of facts for services is one too.
ProducerOutboxContract("memory", ProducerOutboxMemory)
for (const backend of sqlBackendsBothWays) {
  ProducerOutboxContract(`tasks, ${backend.name}`, tasksSqlOn(TasksOutboxSql, backend))
  ProducerOutboxContract(`decisions, ${backend.name}`, decisionsSqlOn(DecisionsOutboxSql, backend))
  ProducerOutboxContract(
    `hub facts, ${backend.name}`,
    ProducerOutboxSql({ schema: "hub", table: "fact_outbox" }).pipe(
      Layer.provide(migrationsLayer("hub", hubMigrations)),
      Layer.provide(backend.layer)
    )
  )
}
