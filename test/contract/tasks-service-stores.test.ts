import { SessionStoreMemory } from "../../adapters/memory/tasks/SessionStoreMemory.ts"
import { TaskApiKeyStoreMemory } from "../../adapters/memory/tasks/TaskApiKeyStoreMemory.ts"
import { TaskEventOutboxMemory } from "../../adapters/memory/tasks/TaskEventOutboxMemory.ts"
import { SessionStoreSql } from "../../adapters/sql/tasks/SessionStoreSql.ts"
import { TaskApiKeyStoreSql } from "../../adapters/sql/tasks/TaskApiKeyStoreSql.ts"
import { TaskEventOutboxSql } from "../../adapters/sql/tasks/TaskEventOutboxSql.ts"
import { sqlBackends } from "../support/Databases.ts"
import { SessionStoreContract } from "./SessionStore.contract.ts"
import { TaskApiKeyStoreContract } from "./TaskApiKeyStore.contract.ts"
import { TaskEventOutboxContract } from "./TaskEventOutbox.contract.ts"
import { tasksSqlOn } from "./tasks-sql-layers.ts"

// The task inbox's own data (not the upstream record store): API keys, sessions, the event outbox.
TaskApiKeyStoreContract("memory", TaskApiKeyStoreMemory)
SessionStoreContract("memory", SessionStoreMemory)
TaskEventOutboxContract("memory", TaskEventOutboxMemory)
for (const backend of sqlBackends) {
  TaskApiKeyStoreContract(backend.name, tasksSqlOn(TaskApiKeyStoreSql, backend))
  SessionStoreContract(backend.name, tasksSqlOn(SessionStoreSql, backend))
  TaskEventOutboxContract(backend.name, tasksSqlOn(TaskEventOutboxSql, backend))
}
