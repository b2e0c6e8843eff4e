import { Effect, Layer, Option } from "effect"
import { FetchHttpClient, type HttpClient } from "effect/http"
import { checkBase } from "../../../adapters/airtable/AirtableBase.ts"
import type * as RateLimiter from "effect/persistence/RateLimiter"
import { type AirtableClient, AirtableClientLive } from "../../../adapters/airtable/AirtableClient.ts"
import { airtableTables } from "../../../adapters/airtable/AirtableFields.ts"
import { type AirtableLimiter, AirtableLimiterFromStore } from "../../../adapters/airtable/AirtableLimiter.ts"
import { RecordWriteGuardsSql } from "../../../adapters/sql/tasks/RecordWriteGuardsSql.ts"
import { RecordStoreAirtable } from "../../../adapters/airtable/RecordStoreAirtable.ts"
import { RecordStoreSql } from "../../../adapters/sql/tasks/RecordStoreSql.ts"
import type { ServerConfig } from "../Config.ts"

/**
 * The process's one Airtable client (AIRTABLE_ENDPOINT_URL), and with it the one limiter of requests per base,
 * over the rate-limit store every instance shares: decisions' record updates and the task inbox's records
 * take their turns from it. Build it once and give the same layer to both.
 */
export const AirtableFromConfig = <E, R>(
  config: ServerConfig,
  rateLimitStore: Layer.Layer<RateLimiter.RateLimiterStore, E, R>
) =>
  AirtableClientLive({ endpointUrl: config.recordStoreEndpointUrl }).pipe(
    Layer.provideMerge(
      Layer.merge(AirtableLimiterFromStore().pipe(Layer.provide(rateLimitStore)), FetchHttpClient.layer)
    )
  )

/**
 * The task inbox's record store of TASKS_RECORD_STORE: its own tables (`sql`), or the Airtable base of
 * AIRTABLE_BASE_ID with AIRTABLE_TOKEN, through the client given, its guarded writes locked and noted in the
 * task inbox's database. A base without a token or id stops the start, naming the setting.
 */
export const TasksRecordStoreFromConfig = <E, R>(
  config: ServerConfig,
  airtable: Layer.Layer<AirtableClient | AirtableLimiter | HttpClient.HttpClient, E, R>
) => {
  if (config.tasksRecordStore === "sql") return RecordStoreSql
  return Layer.unwrap(
    Effect.gen(function* () {
      if (Option.isNone(config.airtableToken)) {
        return yield* Effect.die(new Error("TASKS_RECORD_STORE=airtable needs AIRTABLE_TOKEN"))
      }
      if (Option.isNone(config.airtableBaseId)) {
        return yield* Effect.die(new Error("TASKS_RECORD_STORE=airtable needs AIRTABLE_BASE_ID"))
      }
      const token = config.airtableToken.value
      const baseId = config.airtableBaseId.value
      const tables = airtableTables(config.airtableTableNames)
      // The base must hold every table and field of the field map: the start stops, naming what it lacks.
      const checked = Layer.effectDiscard(
        checkBase({ endpointUrl: config.recordStoreEndpointUrl, baseId, token }, tables).pipe(
          Effect.catch((refusal) =>
            Effect.die(
              new Error(
                `TASKS_RECORD_STORE=airtable: ${refusal.message}${
                  refusal._tag === "BaseIncomplete" ? " (npm run airtable:setup creates what is missing)" : ""
                }`
              )
            )
          )
        )
      )
      return RecordStoreAirtable({ token, baseId, tables }).pipe(
        Layer.provide(Layer.merge(airtable, checked.pipe(Layer.provide(airtable)))),
        Layer.provide(RecordWriteGuardsSql)
      )
    })
  )
}
