import { DecisionStoreMemory } from "../../adapters/memory/decisions/DecisionStoreMemory.ts"
import { DecisionStoreSql } from "../../adapters/sql/decisions/DecisionStoreSql.ts"
import { sqlBackendsBothWays } from "../support/Databases.ts"
import { DecisionStoreContract } from "./DecisionStore.contract.ts"
import { decisionsSqlOn } from "./decisions-sql-layers.ts"

DecisionStoreContract("memory", DecisionStoreMemory)
for (const backend of sqlBackendsBothWays)
  DecisionStoreContract(backend.name, decisionsSqlOn(DecisionStoreSql, backend))
