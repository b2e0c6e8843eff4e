import { Layer } from "effect"
import { CatalogStoreSql } from "../../adapters/sql/hub/CatalogStoreSql.ts"
import { DeliveryStoreSql } from "../../adapters/sql/hub/DeliveryStoreSql.ts"
import { EventStoreSql } from "../../adapters/sql/hub/EventStoreSql.ts"
import { TransactionsMemory } from "../../adapters/memory/TransactionsMemory.ts"
import { NotificationFilingSql } from "../../adapters/sql/hub/NotificationFilingSql.ts"
import { NotificationStoreSql } from "../../adapters/sql/hub/NotificationStoreSql.ts"
import { OrgChatWebhookStoreSql } from "../../adapters/sql/hub/OrgChatWebhookStoreSql.ts"
import { PushSubscriptionStoreSql } from "../../adapters/sql/hub/PushSubscriptionStoreSql.ts"
import { HubEventStoresMemory } from "../../apps/server/hub/HubEventsRuntime.ts"
import { NotificationFiling } from "../../core/hub/NotificationFiling.ts"
import { sqlBackends } from "../support/Databases.ts"
import { hubEventsSqlOn } from "../support/HubEvents.ts"
import { HubEventStoresContract } from "./HubEventStores.contract.ts"

// In memory the filing is the stores' own writes in one unit of work (what the processor does without an adapter).
HubEventStoresContract(
  "memory",
  NotificationFiling.layer.pipe(Layer.provideMerge(Layer.merge(HubEventStoresMemory, TransactionsMemory)))
)
for (const backend of sqlBackends) {
  HubEventStoresContract(
    backend.name,
    hubEventsSqlOn(
      Layer.mergeAll(
        EventStoreSql,
        CatalogStoreSql,
        NotificationStoreSql,
        NotificationFilingSql,
        DeliveryStoreSql,
        OrgChatWebhookStoreSql,
        PushSubscriptionStoreSql
      ),
      backend
    )
  )
}
