import { RecordStoreMemory } from "../../adapters/memory/tasks/RecordStoreMemory.ts"
import { RecordStoreSql } from "../../adapters/sql/tasks/RecordStoreSql.ts"
import { sqlBackends } from "../support/Databases.ts"
import { RecordStoreContract } from "./RecordStore.contract.ts"
import { tasksSqlOn } from "./tasks-sql-layers.ts"

RecordStoreContract("memory", RecordStoreMemory)
for (const backend of sqlBackends) RecordStoreContract(backend.name, tasksSqlOn(RecordStoreSql, backend))
