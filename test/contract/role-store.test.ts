import { RoleStoreMemory } from "../../adapters/memory/decisions/RoleStoreMemory.ts"
import { RoleStoreSql } from "../../adapters/sql/decisions/RoleStoreSql.ts"
import { sqlBackendsBothWays } from "../support/Databases.ts"
import { decisionsSqlOn } from "./decisions-sql-layers.ts"
import { RoleStoreContract } from "./RoleStore.contract.ts"

RoleStoreContract("memory", RoleStoreMemory)
for (const backend of sqlBackendsBothWays) RoleStoreContract(backend.name, decisionsSqlOn(RoleStoreSql, backend))
