import { SessionStoreMemory } from "../../adapters/memory/tasks/SessionStoreMemory.ts"
import { TaskApiKeyStoreMemory } from "../../adapters/memory/tasks/TaskApiKeyStoreMemory.ts"
import { SessionStoreSql } from "../../adapters/sql/tasks/SessionStoreSql.ts"
import { TaskApiKeyStoreSql } from "../../adapters/sql/tasks/TaskApiKeyStoreSql.ts"
import { sqlBackends } from "../support/Databases.ts"
import { SessionStoreContract } from "./SessionStore.contract.ts"
import { TaskApiKeyStoreContract } from "./TaskApiKeyStore.contract.ts"
import { tasksSqlOn } from "./tasks-sql-layers.ts"

// The task inbox's own data (not the upstream record store): API keys, sessions. Its event outbox: producer-outbox.test.ts.
TaskApiKeyStoreContract("memory", TaskApiKeyStoreMemory)
SessionStoreContract("memory", SessionStoreMemory)
for (const backend of sqlBackends) {
  TaskApiKeyStoreContract(backend.name, tasksSqlOn(TaskApiKeyStoreSql, backend))
  SessionStoreContract(backend.name, tasksSqlOn(SessionStoreSql, backend))
}
