import { Layer } from "effect"
import { MailOutboxMemory } from "../../adapters/memory/hub/MailOutboxMemory.ts"
import { SessionStoreMemory } from "../../adapters/memory/hub/SessionStoreMemory.ts"
import { SignInRequestStoreMemory } from "../../adapters/memory/hub/SignInRequestStoreMemory.ts"
import { ExternalViewerStoreMemory, SignInTokenStoreMemory } from "../../adapters/memory/hub/SignInTokenStoreMemory.ts"
import { MailOutboxSql } from "../../adapters/sql/hub/MailOutboxSql.ts"
import { SessionStoreSql } from "../../adapters/sql/hub/SessionStoreSql.ts"
import { SignInRequestStoreSql } from "../../adapters/sql/hub/SignInRequestStoreSql.ts"
import { ExternalViewerStoreSql, SignInTokenStoreSql } from "../../adapters/sql/hub/SignInTokenStoreSql.ts"
import { TransactionsMemory } from "../../adapters/memory/TransactionsMemory.ts"
import { TransactionsSql } from "../../adapters/sql/TransactionsSql.ts"
import { sqlBackends } from "../support/Databases.ts"
import { HubSignInStoresContract } from "./HubSignInStores.contract.ts"
import { hubSqlOn } from "./hub-sql-layers.ts"

HubSignInStoresContract(
  "memory",
  Layer.mergeAll(
    SessionStoreMemory,
    SignInTokenStoreMemory,
    SignInRequestStoreMemory,
    ExternalViewerStoreMemory,
    MailOutboxMemory
  ).pipe(Layer.provideMerge(TransactionsMemory))
)
for (const backend of sqlBackends) {
  HubSignInStoresContract(
    backend.name,
    hubSqlOn(
      Layer.mergeAll(
        SessionStoreSql,
        SignInTokenStoreSql,
        SignInRequestStoreSql,
        ExternalViewerStoreSql,
        MailOutboxSql
      ).pipe(Layer.provideMerge(TransactionsSql)),
      backend
    )
  )
}
