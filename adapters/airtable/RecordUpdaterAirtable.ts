import { Effect, Layer, Schema } from "effect"
import { FetchHttpClient } from "effect/http"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { isBaseId, isRecordId, isTableId } from "../../core/decisions/DecisionAction.ts"
import { RecordUpdateFailed, RecordUpdater, type RecordUpdate } from "../../core/decisions/RecordUpdater.ts"
import { AirtableClient, AirtableClientLive, type AirtableFailure } from "./AirtableClient.ts"
import { AirtableLimiterFromStore, type AirtableLimiterOptions } from "./AirtableLimiter.ts"

export interface RecordUpdaterAirtableConfig {
  /** The API's origin, `https://api.airtable.com` unless pointed at another host (a local stand-in in tests). */
  readonly endpointUrl: string
  /** Per request. Default 30 s. */
  readonly timeoutMs?: number | undefined
  /** The limiter's settings (AirtableLimiter.ts). Default Airtable's. */
  readonly limiter?: AirtableLimiterOptions | undefined
}

const permanent = (message: string) => new RecordUpdateFailed({ message, retryable: false })
const transient = (message: string) => new RecordUpdateFailed({ message, retryable: true })

/** What an error answer means for the action; messages are ours, never the upstream's words. */
const failureFor = (status: number, type: string | undefined): RecordUpdateFailed => {
  switch (status) {
    case 401:
      return permanent("The record store refused the token; set new credentials, then retry.")
    case 403:
      return permanent("The record store denied access to that base or table.")
    case 404:
      return permanent("The record to update was not found.")
    case 413:
      return permanent("The update was too large for the record store.")
    case 422:
      return permanent(
        type === "UNKNOWN_FIELD_NAME"
          ? "The record store rejected the update: a field name is unknown."
          : type === "INVALID_VALUE_FOR_COLUMN" || type === "INVALID_MULTIPLE_CHOICE_OPTIONS"
            ? "The record store rejected the update: a value does not fit its field."
            : "The record store rejected the update."
      )
    case 429:
      return transient("The record store is rate limiting requests; the update will be retried.")
    default:
      return status >= 500
        ? transient("The record store is unavailable; the update will be retried.")
        : permanent(`The record store refused the update (${status}).`)
  }
}

/** What a failure of the client means for the action. */
const failureOfClient = (failure: AirtableFailure): RecordUpdateFailed =>
  failure.type === "BUSY"
    ? transient("The record store is rate limiting requests; the update will be retried.")
    : failure.status === 0
      ? transient("The record store could not be reached; the update will be retried.")
      : failureFor(failure.status, failure.type)

/**
 * The RecordUpdater port over Airtable's record update API: `PATCH /v0/{baseId}/{tableId}/{recordId}` with
 * `{fields, typecast: true}` and the organization's token (only the sent fields change; `typecast` lets the
 * text values of a template fill dates, numbers and selects), through the one client of the process
 * (AirtableClient.ts): the base's turn from the limiter every instance shares with the task inbox, and the
 * pause after a 429. Each update is sent once: the action worker retries it. 429 and 5xx, timeouts and
 * network failures are retryable; every other refusal is permanent.
 */
export const RecordUpdaterAirtableOn: Layer.Layer<RecordUpdater, never, AirtableClient> = Layer.effect(
  RecordUpdater,
  Effect.gen(function* () {
    const client = yield* AirtableClient
    return RecordUpdater.of({
      update: Effect.fn("RecordUpdaterAirtable.update")(function* (input: RecordUpdate) {
        // Only ids of the record store become path segments, so the request's path is always this record's.
        if (!isBaseId(input.baseId) || !isTableId(input.tableId) || !isRecordId(input.recordId)) {
          return yield* permanent("The record to update is not named by record store ids.")
        }
        yield* client
          .send(
            input.token,
            input.baseId,
            {
              method: "PATCH",
              path: `${input.baseId}/${input.tableId}/${input.recordId}`,
              body: { fields: input.fields, typecast: true },
              idempotent: true,
              attempts: 1
            },
            Schema.Unknown
          )
          .pipe(Effect.mapError(failureOfClient))
      })
    })
  })
)

/**
 * The updater with a client and a limiter of its own, over a rate-limit store in this process's memory: for
 * tests and embedding. The bundled server gives it the process's one client (RecordUpdaterAirtableOn).
 */
export const RecordUpdaterAirtable = (config: RecordUpdaterAirtableConfig) =>
  RecordUpdaterAirtableOn.pipe(
    Layer.provide(AirtableClientLive({ endpointUrl: config.endpointUrl, timeoutMillis: config.timeoutMs })),
    Layer.provide(AirtableLimiterFromStore(config.limiter)),
    Layer.provide(RateLimiter.layerStoreMemory),
    Layer.provide(FetchHttpClient.layer)
  )
