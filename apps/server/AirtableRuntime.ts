import { Effect, Layer, Option } from "effect"
import { FetchHttpClient } from "effect/http"
import type * as RateLimiter from "effect/persistence/RateLimiter"
import { type AirtableClient, AirtableClientLive } from "../../adapters/airtable/AirtableClient.ts"
import { airtableTables } from "../../adapters/airtable/AirtableFields.ts"
import { AirtableLimiterFromStore } from "../../adapters/airtable/AirtableLimiter.ts"
import { AirtableWriteGuardsSql } from "../../adapters/airtable/AirtableWriteGuards.ts"
import { RecordStoreAirtable } from "../../adapters/airtable/RecordStoreAirtable.ts"
import { RecordStoreSql } from "../../adapters/sql/tasks/RecordStoreSql.ts"
import type { ServerConfig } from "./Config.ts"

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
    Layer.provide(AirtableLimiterFromStore()),
    Layer.provide(rateLimitStore),
    Layer.provide(FetchHttpClient.layer)
  )

/**
 * The task inbox's record store of TASKS_RECORD_STORE: its own tables (`sql`), or the Airtable base of
 * AIRTABLE_BASE_ID with AIRTABLE_TOKEN, through the client given, its guarded writes locked and noted in the
 * task inbox's database. A base without a token or id stops the start, naming the setting.
 */
export const TasksRecordStoreFromConfig = <E, R>(config: ServerConfig, airtable: Layer.Layer<AirtableClient, E, R>) => {
  if (config.tasksRecordStore === "sql") return RecordStoreSql
  return Layer.unwrap(
    Effect.gen(function* () {
      if (Option.isNone(config.airtableToken)) {
        return yield* Effect.die(new Error("TASKS_RECORD_STORE=airtable needs AIRTABLE_TOKEN"))
      }
      if (Option.isNone(config.airtableBaseId)) {
        return yield* Effect.die(new Error("TASKS_RECORD_STORE=airtable needs AIRTABLE_BASE_ID"))
      }
      return RecordStoreAirtable({
        token: config.airtableToken.value,
        baseId: config.airtableBaseId.value,
        tables: airtableTables(config.airtableTableNames)
      }).pipe(Layer.provide(airtable), Layer.provide(AirtableWriteGuardsSql))
    })
  )
}
