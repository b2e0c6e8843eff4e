import { Layer } from "effect"
import { DecisionStoreMemory } from "../../adapters/memory/decisions/DecisionStoreMemory.ts"
import { FlowStatsMemory } from "../../adapters/memory/decisions/FlowStatsMemory.ts"
import { DecisionStoreSql } from "../../adapters/sql/decisions/DecisionStoreSql.ts"
import { FlowStatsSql } from "../../adapters/sql/decisions/FlowStatsSql.ts"
import { sqlBackends } from "../support/Databases.ts"
import { decisionsSqlOn } from "./decisions-sql-layers.ts"
import { FlowStatsContract } from "./FlowStats.contract.ts"

FlowStatsContract("memory", Layer.provideMerge(FlowStatsMemory, DecisionStoreMemory))
for (const backend of sqlBackends)
  FlowStatsContract(backend.name, decisionsSqlOn(Layer.merge(FlowStatsSql, DecisionStoreSql), backend))
