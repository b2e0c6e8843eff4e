import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { ServiceStore } from "../../../core/hub/ServiceStore.ts"
import { SigningKeyCache } from "../../../core/hub/SigningKeyCache.ts"
import { makeCredentialCache } from "../CredentialCache.ts"
import { CredentialNoticesSql } from "../CredentialNotices.ts"
import { ServiceStoreSql } from "./ServiceStoreSql.ts"

/**
 * ServiceStoreSql with a SigningKeyCache for the hub's event ingest: producers' opened signing keys kept per
 * instance (CredentialCache.ts). Every save of a registration (rotation, suspension, promotion...) and its
 * notice commit together, so every instance drops the producer's key when the change commits. The two are
 * one layer on purpose: a cache provided without the notices of every save would answer rotated keys.
 */
export const ServiceStoreWithKeyCacheSql: Layer.Layer<ServiceStore | SigningKeyCache, never, SqlClient.SqlClient> =
  Layer.effectContext(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const stored = yield* ServiceStore
      const cache = yield* makeCredentialCache<{ readonly service: string; readonly key: string }>({
        scope: "hub.services",
        idOf: (entry) => entry.service
      })
      const store = ServiceStore.of({
        ...stored,
        save: (next, expectedVersion) =>
          sql
            .withTransaction(
              Effect.gen(function* () {
                const saved = yield* stored.save(next, expectedVersion)
                if (saved) yield* cache.changed(next.service.id)
                return saved
              })
            )
            .pipe(Effect.orDie)
      })
      const keys = SigningKeyCache.of({
        get: (service, load) =>
          Effect.map(
            cache.get(
              service,
              Effect.map(load, (key) => (key === undefined ? undefined : { service, key }))
            ),
            (entry) => entry?.key
          )
      })
      return Context.make(ServiceStore, store).pipe(Context.add(SigningKeyCache, keys))
    })
  ).pipe(Layer.provide(Layer.merge(ServiceStoreSql, CredentialNoticesSql)))
