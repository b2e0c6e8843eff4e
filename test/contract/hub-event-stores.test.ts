import { Layer } from "effect"
import { CatalogStoreSql } from "../../adapters/sql/hub/CatalogStoreSql.ts"
import { DeliveryStoreSql } from "../../adapters/sql/hub/DeliveryStoreSql.ts"
import { EventStoreSql } from "../../adapters/sql/hub/EventStoreSql.ts"
import { NotificationStoreSql } from "../../adapters/sql/hub/NotificationStoreSql.ts"
import { OrgChatWebhookStoreSql } from "../../adapters/sql/hub/OrgChatWebhookStoreSql.ts"
import { HubEventStoresMemory } from "../../apps/server/HubEventsRuntime.ts"
import { sqlBackends } from "../support/Databases.ts"
import { hubEventsSqlOn } from "../support/HubEvents.ts"
import { HubEventStoresContract } from "./HubEventStores.contract.ts"

HubEventStoresContract("memory", HubEventStoresMemory)
for (const backend of sqlBackends) {
  HubEventStoresContract(
    backend.name,
    hubEventsSqlOn(
      Layer.mergeAll(EventStoreSql, CatalogStoreSql, NotificationStoreSql, DeliveryStoreSql, OrgChatWebhookStoreSql),
      backend
    )
  )
}
