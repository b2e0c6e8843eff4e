import { McpSessionStoreMemory } from "../../adapters/memory/decisions/McpSessionStoreMemory.ts"
import { McpSessionStoreSql } from "../../adapters/sql/decisions/McpSessionStoreSql.ts"
import { sqlBackends } from "../support/Databases.ts"
import { decisionsSqlOn } from "./decisions-sql-layers.ts"
import { McpSessionStoreContract } from "./McpSessionStore.contract.ts"

McpSessionStoreContract("memory", McpSessionStoreMemory)
for (const backend of sqlBackends) McpSessionStoreContract(backend.name, decisionsSqlOn(McpSessionStoreSql, backend))
