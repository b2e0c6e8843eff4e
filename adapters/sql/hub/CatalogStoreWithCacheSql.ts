import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { CatalogStore, type EventCatalogEntry } from "../../../core/hub/CatalogStore.ts"
import { makeCredentialCache } from "../CredentialCache.ts"
import { CredentialNoticesSql } from "../CredentialNotices.ts"
import { CatalogStoreSql } from "./CatalogStoreSql.ts"

/**
 * CatalogStoreSql with the entries that event ingest and processing look up kept per instance, so a
 * delivery reads no catalog row. Kept as the credential caches are (CredentialCache.ts): a replaced entry
 * is dropped on every instance when its upsert commits (the notice is sent in the upsert's transaction),
 * nothing is answered from the cache while notices may be missed, and only found types are kept, so an
 * unknown type is looked up every time. An insert-if-absent changes no stored entry and sends no notice.
 */
export const CatalogStoreWithCacheSql: Layer.Layer<CatalogStore, never, SqlClient.SqlClient> = Layer.effect(
  CatalogStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const stored = yield* CatalogStore
    const cache = yield* makeCredentialCache<EventCatalogEntry>({
      scope: "hub.event_catalog",
      idOf: (entry) => entry.type,
      capacity: 1_000
    })
    return CatalogStore.of({
      ...stored,
      upsert: (entry) =>
        sql
          .withTransaction(
            Effect.gen(function* () {
              const saved = yield* stored.upsert(entry)
              yield* cache.changed(entry.type)
              return saved
            })
          )
          .pipe(Effect.orDie),
      // The read is built only when the cache misses.
      find: (type) =>
        cache.get(
          type,
          Effect.suspend(() => stored.find(type))
        )
    })
  })
).pipe(Layer.provide(Layer.merge(CatalogStoreSql, CredentialNoticesSql)))
