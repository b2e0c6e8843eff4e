import { TemplateStoreMemory } from "../../adapters/memory/decisions/TemplateStoreMemory.ts"
import { TemplateStoreSql } from "../../adapters/sql/decisions/TemplateStoreSql.ts"
import { sqlBackends } from "../support/Databases.ts"
import { decisionsSqlOn } from "./decisions-sql-layers.ts"
import { TemplateStoreContract } from "./TemplateStore.contract.ts"

TemplateStoreContract("memory", TemplateStoreMemory)
for (const backend of sqlBackends) TemplateStoreContract(backend.name, decisionsSqlOn(TemplateStoreSql, backend))
