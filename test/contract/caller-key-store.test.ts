import { CallerKeyStoreMemory } from "../../adapters/memory/decisions/CallerKeyStoreMemory.ts"
import { CallerKeyStoreSql } from "../../adapters/sql/decisions/CallerKeyStoreSql.ts"
import { sqlBackends } from "../support/Databases.ts"
import { CallerKeyStoreContract } from "./CallerKeyStore.contract.ts"
import { decisionsSqlOn } from "./decisions-sql-layers.ts"

CallerKeyStoreContract("memory", CallerKeyStoreMemory)
for (const backend of sqlBackends) CallerKeyStoreContract(backend.name, decisionsSqlOn(CallerKeyStoreSql, backend))
