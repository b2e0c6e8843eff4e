import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import type { SqlClient } from "effect/sql"
import { CredentialNotices, CredentialNoticesSql } from "../../adapters/sql/CredentialNotices.ts"
import type { DatabaseServices } from "../../adapters/sql/Database.ts"
import { CatalogStoreWithCacheSql } from "../../adapters/sql/hub/CatalogStoreWithCacheSql.ts"
import { hubMigrations } from "../../adapters/sql/hub/migrations.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { CatalogStore, type CatalogEntryInput } from "../../core/hub/CatalogStore.ts"
import { sqlBackends } from "../support/Databases.ts"
import { acknowledgement, instanceOn, statementsOf, twoWaysIn } from "../support/TwoInstances.ts"
import { HubEventStoresContract } from "./HubEventStores.contract.ts"
import { hubSqlOn } from "./hub-sql-layers.ts"
import { EventStoreSql } from "../../adapters/sql/hub/EventStoreSql.ts"
import { NotificationFilingSql } from "../../adapters/sql/hub/NotificationFilingSql.ts"
import { NotificationStoreSql } from "../../adapters/sql/hub/NotificationStoreSql.ts"
import { OrgChatWebhookStoreSql } from "../../adapters/sql/hub/OrgChatWebhookStoreSql.ts"
import { PushSubscriptionStoreSql } from "../../adapters/sql/hub/PushSubscriptionStoreSql.ts"
import { DeliveryStoreSql } from "../../adapters/sql/hub/DeliveryStoreSql.ts"

/**
 * The event catalog kept per instance: a lookup of a kept entry reads nothing, and a replacement on one
 * instance is seen by the other at its next lookup once the change has committed (on a Postgres server,
 * once its listener has acted on the notice).
 */

const instanceLayer: Layer.Layer<CatalogStore | CredentialNotices, never, SqlClient.SqlClient> = Layer.mergeAll(
  CatalogStoreWithCacheSql,
  CredentialNoticesSql
)

const instance = (database: Context.Context<DatabaseServices>) =>
  Effect.map(instanceOn(instanceLayer, database), (context) => ({
    catalog: Context.get(context, CatalogStore),
    notices: Context.get(context, CredentialNotices)
  }))

const entry = (title: string): CatalogEntryInput => ({
  type: "acme.report.generated",
  producer: "acme",
  isNotification: false,
  dataSchema: { type: "object", properties: { [title]: { type: "string" } } },
  updatedAt: "2040-01-01T00:00:00.000Z"
})

for (const backend of sqlBackends) {
  HubEventStoresContract(
    `${backend.name}, with the catalog kept`,
    hubSqlOn(
      Layer.mergeAll(
        EventStoreSql,
        CatalogStoreWithCacheSql,
        NotificationStoreSql,
        NotificationFilingSql,
        DeliveryStoreSql,
        OrgChatWebhookStoreSql,
        PushSubscriptionStoreSql
      ),
      backend
    )
  )

  describe(`event catalog kept across two hub instances (${backend.name})`, () => {
    it.live("a kept entry is read once; a replacement on one instance is what the other finds next", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { first, second } = yield* twoWaysIn(backend, migrationsLayer("hub", hubMigrations))
          const a = yield* instance(first)
          const b = yield* instance(second)
          const added = yield* acknowledgement(b.notices, backend, { scope: "hub.event_catalog", id: entry("").type })
          yield* a.catalog.upsert(entry("title"))
          // A lookup that races a notice is answered but not kept: wait until the addition is heard.
          yield* added

          const [found, read] = yield* statementsOf(b.catalog.find("acme.report.generated"))
          assert.strictEqual(found?.version, 1)
          assert.lengthOf(read, 1, "the first lookup reads the entry")
          const [again, none] = yield* statementsOf(b.catalog.find("acme.report.generated"))
          assert.deepStrictEqual(again, found)
          assert.deepStrictEqual(none, [], "the next lookup reads nothing")

          const heard = yield* acknowledgement(b.notices, backend, { scope: "hub.event_catalog", id: found!.type })
          yield* a.catalog.upsert(entry("summary"))
          yield* heard
          const replaced = yield* b.catalog.find("acme.report.generated")
          assert.strictEqual(replaced?.version, 2)
          assert.deepStrictEqual(replaced?.dataSchema, entry("summary").dataSchema)

          // An unknown type is never kept: it is read every time, and found once it is added.
          assert.isUndefined(yield* b.catalog.find("acme.report.deleted"))
          yield* a.catalog.insertIfAbsent({ ...entry("title"), type: "acme.report.deleted" })
          assert.strictEqual((yield* b.catalog.find("acme.report.deleted"))?.version, 1)
        })
      )
    )
  })
}
