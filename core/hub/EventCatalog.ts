import { Ajv, type ErrorObject, type ValidateFunction } from "ajv"
import { Clock, Context, Effect, Layer, Predicate } from "effect"
import { isEmail } from "../kernel/Email.ts"
import { ValidationError } from "../kernel/Errors.ts"
import { isIsoDateTime } from "../kernel/Timestamp.ts"
import { CatalogStore, type CatalogEntryInput, type EventCatalogEntry } from "./CatalogStore.ts"
import { ServiceStore } from "./ServiceStore.ts"

/** Document 1, "Events" 2: no hyphens; at least a service and one more segment. */
export const eventTypePattern = /^[a-z0-9]+(\.[a-z0-9_]+)+$/
export const eventTypeMax = 200
/** A catalog schema is configuration, not data: 32 KB of JSON is plenty and bounds the compile. */
export const dataSchemaMaxBytes = 32 * 1024
/** At most this many issues are reported for one invalid `data`. */
const maxIssues = 20

/**
 * `EventCatalogEntry.type` has the form `<service>.<noun>.<verb>`: the pattern of "Events" 2 with at least
 * three segments. The prefix is not required to equal the producer: the catalog, not the name, decides
 * ownership, and a service id may hold characters a type cannot (document 1 lists `schema-analysis`).
 */
export const isEventType = (type: string): boolean =>
  type.length <= eventTypeMax && eventTypePattern.test(type) && type.split(".").length >= 3

/** One reason `data` failed its schema, in the envelope middleware's `details` shape. */
export interface DataIssue {
  readonly in: "body"
  readonly field: string
  readonly message: string
}

/**
 * One Ajv instance per compiled schema: a schema's `$id` can never clash with another type's, and dropping
 * the validator drops everything it compiled. Strict about keywords (a typo is a compile error, not a
 * silently ignored rule); the few formats a notification needs are ours, any other format is refused.
 */
const compile = (schema: Readonly<Record<string, unknown>>): ValidateFunction => {
  const ajv = new Ajv({
    allErrors: true,
    strictSchema: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    logger: false
  })
  ajv.addFormat("email", isEmail)
  ajv.addFormat("date-time", isIsoDateTime)
  ajv.addFormat("uri", (value: string) => URL.canParse(value))
  return ajv.compile(schema as never)
}

/** Why a schema cannot be a catalog schema; undefined when it compiles. */
export const dataSchemaProblem = (schema: unknown): string | undefined => {
  if (!Predicate.isObject(schema) || Array.isArray(schema)) return "dataSchema must be a JSON Schema object."
  if (JSON.stringify(schema).length > dataSchemaMaxBytes) return "dataSchema is too large."
  if (Object.hasOwn(schema, "$async")) return "dataSchema must not be asynchronous."
  try {
    compile(schema as Record<string, unknown>)
    return undefined
  } catch {
    return "dataSchema is not a valid JSON Schema."
  }
}

const toIssue = (error: ErrorObject): DataIssue => {
  const path = error.instancePath
    .split("/")
    .filter((segment) => segment.length > 0)
    .map((segment) => segment.replace(/~1/g, "/").replace(/~0/g, "~"))
  const missing =
    error.keyword === "required" && typeof error.params["missingProperty"] === "string"
      ? [error.params["missingProperty"]]
      : []
  return { in: "body", field: ["data", ...path, ...missing].join("."), message: error.message ?? "is invalid" }
}

export interface CatalogAddition {
  readonly type: string
  readonly producer: string
  readonly isNotification?: boolean | undefined
  readonly dataSchema: unknown
}

/**
 * The event catalog's use cases: operators add or replace entries (the producer must be a registered
 * service and the schema must compile), the public reads it, and ingest checks `data` against the entry's
 * schema with a validator compiled once per type and version.
 */
export class EventCatalog extends Context.Service<
  EventCatalog,
  {
    readonly add: (input: CatalogAddition) => Effect.Effect<EventCatalogEntry, ValidationError>
    /**
     * Adds each entry that is absent (first-party types at start); entries already stored are left as they are,
     * and an entry whose producer is not registered is skipped with a warning.
     */
    readonly seed: (entries: ReadonlyArray<CatalogAddition>) => Effect.Effect<void>
    readonly find: (type: string) => Effect.Effect<EventCatalogEntry | undefined>
    readonly list: (producer?: string | undefined) => Effect.Effect<ReadonlyArray<EventCatalogEntry>>
    /** The reasons `data` fails the entry's schema; empty when it passes. */
    readonly checkData: (entry: EventCatalogEntry, data: unknown) => ReadonlyArray<DataIssue>
  }
>()("core/hub/EventCatalog") {
  static readonly layer = Layer.effect(
    EventCatalog,
    Effect.gen(function* () {
      const store = yield* CatalogStore
      const services = yield* ServiceStore
      const validators = new Map<string, { readonly version: number; readonly validate: ValidateFunction }>()
      const nowIso = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

      const checked = (input: CatalogAddition) =>
        Effect.gen(function* () {
          if (!isEventType(input.type)) {
            return yield* new ValidationError({
              message: "type must look like <service>.<noun>.<verb>: lowercase letters, digits and underscores.",
              details: [{ in: "body", field: "type", message: "must match ^[a-z0-9]+(\\.[a-z0-9_]+)+$" }]
            })
          }
          if ((yield* services.find(input.producer)) === undefined) {
            return yield* new ValidationError({
              message: "producer must be a registered service.",
              details: [{ in: "body", field: "producer", message: "is not a registered service" }]
            })
          }
          const problem = dataSchemaProblem(input.dataSchema)
          if (problem !== undefined) {
            return yield* new ValidationError({
              message: problem,
              details: [{ in: "body", field: "dataSchema", message: problem }]
            })
          }
          const entry: CatalogEntryInput = {
            type: input.type,
            producer: input.producer,
            isNotification: input.isNotification ?? false,
            dataSchema: input.dataSchema as Record<string, unknown>,
            updatedAt: yield* nowIso
          }
          return entry
        })

      const validatorFor = (entry: EventCatalogEntry): ValidateFunction => {
        const cached = validators.get(entry.type)
        if (cached !== undefined && cached.version === entry.version) return cached.validate
        const validate = compile(entry.dataSchema)
        validators.set(entry.type, { version: entry.version, validate })
        return validate
      }

      return EventCatalog.of({
        add: (input) => Effect.flatMap(checked(input), store.upsert),
        seed: (entries) =>
          Effect.forEach(
            entries,
            (input) =>
              checked(input).pipe(
                Effect.flatMap(store.insertIfAbsent),
                // A producer this server does not register (a first-party service left out) keeps its types out.
                Effect.catchTag("ValidationError", (error) =>
                  Effect.logWarning(`event catalog: ${input.type} not seeded: ${error.message}`)
                )
              ),
            { discard: true }
          ),
        find: store.find,
        list: store.list,
        checkData: (entry, data) => {
          const validate = validatorFor(entry)
          if (validate(data)) return []
          return (validate.errors ?? []).slice(0, maxIssues).map(toIssue)
        }
      })
    })
  )
}
