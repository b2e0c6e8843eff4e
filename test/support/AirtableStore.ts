import { Effect, Layer, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { AirtableClientLive } from "../../adapters/airtable/AirtableClient.ts"
import { airtableTables, type AirtableField, type AirtableTable } from "../../adapters/airtable/AirtableFields.ts"
import { AirtableLimiterFromStore, type AirtableLimiterOptions } from "../../adapters/airtable/AirtableLimiter.ts"
import type { RecordWriteGuards } from "../../core/tasks/RecordWriteGuards.ts"
import { RecordWriteGuardsSql } from "../../adapters/sql/tasks/RecordWriteGuardsSql.ts"
import { RecordStoreAirtable } from "../../adapters/airtable/RecordStoreAirtable.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { tasksMigrations } from "../../adapters/sql/tasks/migrations.ts"
import type { RecordStore } from "../../core/tasks/RecordStore.ts"
import { newBaseId, startAirtableStandIn, type AirtableStandIn } from "../fakes/AirtableStandIn.ts"
import { ensureBase } from "../../adapters/airtable/AirtableBase.ts"
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

export interface AirtableOnStandInOptions {
  readonly tables?: ReadonlyArray<AirtableTable> | undefined
  /** Airtable's limits on both sides (5 requests a second per base, the pause after a 429); default none. */
  readonly limits?: boolean | undefined
  readonly limiter?: AirtableLimiterOptions | undefined
  /** Told the stand-in and its base once they are up (to inspect the requests it saw). */
  readonly onStart?: ((standIn: AirtableStandIn, baseId: string) => void) | undefined
}

/**
 * RecordStoreAirtable over a stand-in whose base has the tables of `tables`, made through the metadata API; its
 * write guards on the database given (its `tasks` schema migrated). Without `limits` the stand-in enforces no
 * rate and the limiter spaces nothing (the tests of the store's own rules); with them, both are Airtable's.
 */
export const airtableRecordStore = (options: AirtableOnStandInOptions = {}) =>
  Layer.unwrap(
    Effect.gen(function* () {
      const tables = options.tables ?? airtableTables()
      const { standIn, baseId } = yield* standInWithBase({ perSecond: options.limits === true ? undefined : 100_000 })
      // One limiter for the setup and the store, as a server and its setup share the rate-limit store.
      const limited = yield* Layer.build(
        Layer.merge(
          AirtableLimiterFromStore(options.limiter ?? (options.limits === true ? {} : { spacingMillis: 1 })).pipe(
            Layer.provide(RateLimiter.layerStoreMemory)
          ),
          FetchHttpClient.layer
        )
      )
      yield* ensureBase({ endpointUrl: standIn.url, baseId, token: Redacted.make(token) }, tables).pipe(
        Effect.provideContext(limited),
        Effect.orDie
      )
      options.onStart?.(standIn, baseId)
      return RecordStoreAirtable({ token: Redacted.make(token), baseId, tables }).pipe(
        Layer.provide(AirtableClientLive({ endpointUrl: standIn.url })),
        Layer.provide(Layer.succeedContext(limited)),
        // The guards are provided too, for a test to leave a write half done as a crash would.
        Layer.provideMerge(RecordWriteGuardsSql)
      )
    })
  )

/** As `airtableRecordStore`, with its guards on a fresh database of the backend. */
export const airtableOnStandIn = (
  options: AirtableOnStandInOptions & { readonly backend: SqlBackend }
): Layer.Layer<RecordStore | RecordWriteGuards, unknown> =>
  airtableRecordStore(options).pipe(
    Layer.provide(migrationsLayer("tasks", tasksMigrations)),
    Layer.provide(options.backend.layer)
  )
