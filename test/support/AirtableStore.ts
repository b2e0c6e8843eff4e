import { Effect, Layer, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { AirtableClientLive } from "../../adapters/airtable/AirtableClient.ts"
import { airtableTables, type AirtableField, type AirtableTable } from "../../adapters/airtable/AirtableFields.ts"
import { AirtableLimiterFromStore, type AirtableLimiterOptions } from "../../adapters/airtable/AirtableLimiter.ts"
import { AirtableWriteGuardsSql } from "../../adapters/airtable/AirtableWriteGuards.ts"
import { RecordStoreAirtable } from "../../adapters/airtable/RecordStoreAirtable.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { tasksMigrations } from "../../adapters/sql/tasks/migrations.ts"
import type { RecordStore } from "../../core/tasks/RecordStore.ts"
import { newBaseId, startAirtableStandIn, type AirtableStandIn } from "../fakes/AirtableStandIn.ts"
import { provisionBase } from "./AirtableStandInBase.ts"
import type { SqlBackend } from "./Databases.ts"

/** The task inbox's field map with more fields in some tables (a test's own). */
export const withFields = (
  extra: Readonly<Record<string, ReadonlyArray<AirtableField>>>
): ReadonlyArray<AirtableTable> =>
  airtableTables().map((table) => ({ ...table, fields: [...table.fields, ...(extra[table.table] ?? [])] }))

const token = "patStandInToken.0123456789abcdef"

/** A stand-in listening with one empty base, closed with the scope. */
export const standInWithBase = (options: { readonly perSecond?: number | undefined } = {}) =>
  Effect.gen(function* () {
    const baseId = newBaseId()
    const standIn: AirtableStandIn = yield* Effect.acquireRelease(
      Effect.promise(() =>
        startAirtableStandIn({
          tokens: [token],
          bases: { [baseId]: {} },
          ...(options.perSecond === undefined ? {} : { rateLimit: { perSecond: options.perSecond } })
        })
      ),
      (standIn) => Effect.promise(() => standIn.close())
    )
    return { standIn, baseId, token }
  })

/**
 * RecordStoreAirtable over a stand-in whose base has the tables of `tables`, made through the metadata API; its
 * write guards on the backend's database (migrated). Without `limits` the stand-in enforces no rate and the
 * limiter spaces nothing (the tests of the store's own rules); with them, both are Airtable's.
 */
export const airtableOnStandIn = (options: {
  readonly tables?: ReadonlyArray<AirtableTable> | undefined
  readonly backend: SqlBackend
  readonly limits?: boolean | undefined
  readonly limiter?: AirtableLimiterOptions | undefined
}): Layer.Layer<RecordStore, unknown> =>
  Layer.unwrap(
    Effect.gen(function* () {
      const tables = options.tables ?? airtableTables()
      const { standIn, baseId } = yield* standInWithBase({ perSecond: options.limits === true ? undefined : 100_000 })
      yield* Effect.promise(() => provisionBase(standIn.url, token, baseId, tables))
      return RecordStoreAirtable({ token: Redacted.make(token), baseId, tables }).pipe(
        Layer.provide(AirtableClientLive({ endpointUrl: standIn.url })),
        Layer.provide(
          AirtableLimiterFromStore(options.limiter ?? (options.limits === true ? {} : { spacingMillis: 1 }))
        ),
        Layer.provide(RateLimiter.layerStoreMemory),
        Layer.provide(FetchHttpClient.layer),
        Layer.provide(AirtableWriteGuardsSql),
        Layer.provide(migrationsLayer("tasks", tasksMigrations)),
        Layer.provide(options.backend.layer)
      )
    })
  )
