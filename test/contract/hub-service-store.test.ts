import { ServiceStoreMemory } from "../../adapters/memory/hub/ServiceStoreMemory.ts"
import { ServiceStoreSql } from "../../adapters/sql/hub/ServiceStoreSql.ts"
import { sqlBackends } from "../support/Databases.ts"
import { hubSqlOn } from "./hub-sql-layers.ts"
import { ServiceStoreContract } from "./ServiceStore.contract.ts"

ServiceStoreContract("memory", ServiceStoreMemory)
for (const backend of sqlBackends) ServiceStoreContract(backend.name, hubSqlOn(ServiceStoreSql, backend))
