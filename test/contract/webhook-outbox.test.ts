import { Layer } from "effect"
import { DecisionStoreMemory } from "../../adapters/memory/decisions/DecisionStoreMemory.ts"
import { RecordStoreCredentialsMemory } from "../../adapters/memory/decisions/RecordStoreCredentialsMemory.ts"
import { DecisionStoreSql } from "../../adapters/sql/decisions/DecisionStoreSql.ts"
import { RecordStoreCredentialsSql } from "../../adapters/sql/decisions/RecordStoreCredentialsSql.ts"
import { WebhookOutboxSql } from "../../adapters/sql/decisions/WebhookOutboxSql.ts"
import { sqlBackends } from "../support/Databases.ts"
import { decisionsSqlOn } from "./decisions-sql-layers.ts"
import { WebhookOutboxContract } from "./WebhookOutbox.contract.ts"

WebhookOutboxContract("memory", Layer.merge(DecisionStoreMemory, RecordStoreCredentialsMemory))
for (const backend of sqlBackends) {
  WebhookOutboxContract(
    backend.name,
    decisionsSqlOn(Layer.mergeAll(DecisionStoreSql, WebhookOutboxSql, RecordStoreCredentialsSql), backend)
  )
}
