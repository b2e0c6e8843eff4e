import { Effect, Layer, Redacted } from "effect"
import { isBaseId, isRecordId, isTableId } from "../../core/decisions/DecisionAction.ts"
import { RecordUpdateFailed, RecordUpdater, type RecordUpdate } from "../../core/decisions/RecordUpdater.ts"

export interface RecordUpdaterAirtableConfig {
  /** The API's origin, `https://api.airtable.com` unless pointed at another host (a local stand-in in tests). */
  readonly endpointUrl: string
  /** Per request. Default 30 s. */
  readonly timeoutMs?: number | undefined
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

/**
 * The RecordUpdater port over Airtable's record update API: `PATCH /v0/{baseId}/{tableId}/{recordId}` with
 * `{fields, typecast: true}` and a bearer token (only the sent fields change; `typecast` lets the text
 * values of a template fill dates, numbers and selects). 429 and 5xx, timeouts and network failures are
 * retryable; every other refusal is permanent.
 */
export const RecordUpdaterAirtable = (config: RecordUpdaterAirtableConfig) =>
  Layer.succeed(RecordUpdater)(
    RecordUpdater.of({
      update: Effect.fn("RecordUpdaterAirtable.update")(function* (input: RecordUpdate) {
        // Only ids of the record store become path segments, so the request's path is always this record's.
        if (!isBaseId(input.baseId) || !isTableId(input.tableId) || !isRecordId(input.recordId)) {
          return yield* permanent("The record to update is not named by record store ids.")
        }
        const url = new URL(`/v0/${input.baseId}/${input.tableId}/${input.recordId}`, config.endpointUrl)
        const response = yield* use(
          (signal) =>
            fetch(url, {
              method: "PATCH",
              headers: {
                authorization: `Bearer ${Redacted.value(input.token)}`,
                "content-type": "application/json"
              },
              body: JSON.stringify({ fields: input.fields, typecast: true }),
              signal
            }).then(async (r) => ({ status: r.status, body: await r.text() })),
          config.timeoutMs ?? 30_000
        )
        if (response.status >= 200 && response.status < 300) return
        return yield* failureFor(response.status, errorType(response.body))
      })
    })
  )

/** The one place a Promise of the upstream is run: any rejection (network, timeout) is a retryable failure. */
const use = <A>(f: (signal: AbortSignal) => Promise<A>, timeoutMs: number) =>
  Effect.tryPromise({
    try: () => f(AbortSignal.timeout(timeoutMs)),
    catch: () => transient("The record store could not be reached; the update will be retried.")
  })

/** `{"error": {"type"}}` or `{"error": "NOT_FOUND"}`: the type, if the body says one. */
const errorType = (body: string): string | undefined => {
  try {
    const parsed = JSON.parse(body) as { error?: unknown }
    const error = parsed.error
    if (typeof error === "string") return error
    if (typeof error === "object" && error !== null && typeof (error as { type?: unknown }).type === "string") {
      return (error as { type: string }).type
    }
  } catch {
    return undefined
  }
  return undefined
}
