import { Ajv, type ErrorObject, type Options, type ValidateFunction } from "ajv"
import { RE2JS } from "re2js"
import { isoAt } from "../kernel/Timestamp.ts"
import { Clock, Context, Effect, Layer, Predicate } from "effect"
import { isEmail } from "../kernel/Email.ts"
import { ValidationError } from "../kernel/Errors.ts"
import { bodyIssue, type FieldIssue } from "../kernel/FieldIssue.ts"
import { isIsoDateTime } from "../kernel/Timestamp.ts"
import { CatalogStore, type CatalogEntryInput, type EventCatalogEntry } from "./CatalogStore.ts"
import { ServiceStore } from "./ServiceStore.ts"

/** No hyphens; at least a service and one more segment. */
export const eventTypePattern = /^[a-z0-9]+(\.[a-z0-9_]+)+$/
export const eventTypeMax = 200
/** A catalog schema is configuration, not data: 32 KB of JSON is plenty and bounds the compile. */
export const dataSchemaMaxBytes = 32 * 1024
/** At most this many issues are reported for one invalid `data`. */
const maxIssues = 20
/** A reported field name is at most this long: it is built from the producer's own keys. */
const fieldMax = 200

/**
 * The first `max` UTF-16 units of `text`, never ending in half of a surrogate pair: a lone surrogate is
 * text Postgres refuses in jsonb, so a cut that made one would lose the row it was cut for.
 */
export const clipText = (text: string, max: number): string => {
  if (text.length <= max) return text
  const end = /[\ud800-\udbff]/.test(text.charAt(max - 1)) ? max - 1 : max
  return text.slice(0, end)
}

/** A field name from path segments, bounded (`…` marks a cut). */
export const fieldName = (segments: ReadonlyArray<string>): string => {
  const joined = segments.join(".")
  return joined.length <= fieldMax ? joined : `${clipText(joined, fieldMax - 1)}…`
}

/**
 * `EventCatalogEntry.type` has the form `<service>.<noun>.<verb>`: the pattern of "Events" 2 with at least
 * three segments. The prefix is not required to equal the producer: the catalog, not the name, decides
 * ownership, and a service id may hold characters a type cannot.
 */
export const isEventType = (type: string): boolean =>
  type.length <= eventTypeMax && eventTypePattern.test(type) && type.split(".").length >= 3

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
    logger: false,
    code: { regExp: re2 }
  })
  ajv.addFormat("email", isEmail)
  ajv.addFormat("date-time", isIsoDateTime)
  ajv.addFormat("uri", (value: string) => URL.canParse(value))
  return ajv.compile(schema as never)
}

/**
 * Patterns of data schemas run on RE2 (re2js): linear time in the text whatever the pattern, so no schema can
 * make one event's check stall the hub. What RE2 cannot run (look-around, back-references) is refused when
 * the schema is added. JSON Schema patterns match anywhere in the text unless anchored, as `test` does.
 */
const re2: NonNullable<NonNullable<Options["code"]>["regExp"]> = Object.assign(
  (pattern: string) => {
    const compiled = RE2JS.compile(pattern)
    return { test: (text: string) => compiled.test(text) }
  },
  { code: "re2js" }
)

/** Whether RE2 can run a pattern. */
export const isLinearPattern = (pattern: string): boolean => {
  try {
    RE2JS.compile(pattern)
    return true
  } catch {
    return false
  }
}

/** At most this many patterns in one schema: each may scan every string of an event once. */
export const dataSchemaPatternsMax = 32
/** `uniqueItems` compares items pairwise: an array that holds it must be bounded by `maxItems`, at most this. */
export const uniqueItemsMax = 1000
/** References (and so recursion) make a check's cost unbounded: a catalog schema is self-contained. */
const referenceKeywords = ["$ref", "$dynamicRef", "$recursiveRef"]

/** Why the cost of checking data against a schema could be unbounded; undefined when it is bounded. */
const costProblem = (schema: unknown): string | undefined => {
  const pending: Array<unknown> = [schema]
  while (pending.length > 0) {
    const node = pending.pop()
    if (!Predicate.isObjectOrArray(node)) continue
    if (!Array.isArray(node)) {
      const record = node as Record<string, unknown>
      if (referenceKeywords.some((keyword) => Object.hasOwn(record, keyword))) {
        return "dataSchema must be self-contained: no $ref, $dynamicRef or $recursiveRef."
      }
      if (record["uniqueItems"] === true) {
        const max = record["maxItems"]
        if (typeof max !== "number" || max > uniqueItemsMax) {
          return `dataSchema: uniqueItems needs maxItems of at most ${uniqueItemsMax} beside it.`
        }
      }
    }
    pending.push(...Object.values(node))
  }
  return undefined
}

/** Every regular expression the schema holds: `pattern` values and `patternProperties` keys, at any depth. */
const schemaPatterns = (schema: unknown): ReadonlyArray<string> => {
  const found: Array<string> = []
  const pending: Array<unknown> = [schema]
  while (pending.length > 0) {
    const node = pending.pop()
    if (!Predicate.isObjectOrArray(node)) continue
    const record = node as Record<string, unknown>
    if (!Array.isArray(node)) {
      if (Object.hasOwn(record, "pattern") && typeof record["pattern"] === "string") found.push(record["pattern"])
      if (Object.hasOwn(record, "patternProperties") && Predicate.isObject(record["patternProperties"])) {
        found.push(...Object.keys(record["patternProperties"]))
      }
    }
    pending.push(...Object.values(record))
  }
  return found
}

/** Why a schema cannot be a catalog schema; undefined when it compiles. */
export const dataSchemaProblem = (schema: unknown): string | undefined => {
  if (!Predicate.isObject(schema)) return "dataSchema must be a JSON Schema object."
  if (Object.hasOwn(schema, "$async")) return "dataSchema must not be asynchronous."
  const patterns = schemaPatterns(schema)
  if (patterns.length > dataSchemaPatternsMax) {
    return `dataSchema has more than ${dataSchemaPatternsMax} patterns.`
  }
  if (!patterns.every(isLinearPattern)) {
    return "dataSchema has a pattern that needs look-around or a back-reference; patterns run on RE2, write it without."
  }
  const cost = costProblem(schema)
  if (cost !== undefined) return cost
  // Inside the try: a schema nested thousands deep overflows the stack of stringify and compile alike.
  try {
    if (JSON.stringify(schema).length > dataSchemaMaxBytes) return "dataSchema is too large."
    compile(schema)
    return undefined
  } catch {
    return "dataSchema is not a valid JSON Schema."
  }
}

/**
 * Our own words for a failed keyword: the validator's messages are its wording, can quote the schema at
 * length (`must match pattern "…"`) and do not name an extra property.
 */
const keywordMessages: Readonly<Record<string, (params: Record<string, unknown>) => string>> = {
  required: () => "is required",
  additionalProperties: () => "is not allowed",
  unevaluatedProperties: () => "is not allowed",
  type: (params) => `must be of type ${fieldName([String(params["type"])])}`,
  minLength: (params) => `must be at least ${String(params["limit"])} characters`,
  maxLength: (params) => `must be at most ${String(params["limit"])} characters`,
  minItems: (params) => `must have at least ${String(params["limit"])} items`,
  maxItems: (params) => `must have at most ${String(params["limit"])} items`,
  minimum: (params) => `must be at least ${String(params["limit"])}`,
  maximum: (params) => `must be at most ${String(params["limit"])}`,
  exclusiveMinimum: (params) => `must be greater than ${String(params["limit"])}`,
  exclusiveMaximum: (params) => `must be less than ${String(params["limit"])}`,
  pattern: () => "does not match the expected pattern",
  format: (params) => `must be a valid ${fieldName([String(params["format"])])}`,
  enum: () => "is not one of the allowed values",
  const: () => "is not the allowed value",
  uniqueItems: () => "must not have duplicate items"
}

/** One reason `data` failed its schema, as a field of the body. */
const toIssue = (error: ErrorObject): FieldIssue => {
  const path = error.instancePath
    .split("/")
    .filter((segment) => segment.length > 0)
    .map((segment) => segment.replace(/~1/g, "/").replace(/~0/g, "~"))
  const params = error.params as Record<string, unknown>
  // The property a `required` or `additionalProperties` failure is about, as the last segment of the field.
  const named = [params["missingProperty"], params["additionalProperty"], error.propertyName].filter(
    (key): key is string => typeof key === "string"
  )
  const message = Object.hasOwn(keywordMessages, error.keyword) ? keywordMessages[error.keyword]!(params) : "is invalid"
  return { in: "body", field: fieldName(["data", ...path, ...named.slice(0, 1)]), message }
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
    readonly checkData: (entry: EventCatalogEntry, data: unknown) => ReadonlyArray<FieldIssue>
  }
>()("core/hub/EventCatalog") {
  static readonly layer = Layer.effect(
    EventCatalog,
    Effect.gen(function* () {
      const store = yield* CatalogStore
      const services = yield* ServiceStore
      const validators = new Map<string, { readonly version: number; readonly validate: ValidateFunction }>()
      const nowIso = Effect.map(Clock.currentTimeMillis, isoAt)

      const checked = (input: CatalogAddition) =>
        Effect.gen(function* () {
          if (!isEventType(input.type)) {
            return yield* new ValidationError({
              message: "type must look like <service>.<noun>.<verb>: lowercase letters, digits and underscores.",
              details: [bodyIssue("type", "must match ^[a-z0-9]+(\\.[a-z0-9_]+)+$")]
            })
          }
          if ((yield* services.find(input.producer)) === undefined) {
            return yield* new ValidationError({
              message: "producer must be a registered service.",
              details: [bodyIssue("producer", "is not a registered service")]
            })
          }
          const problem = dataSchemaProblem(input.dataSchema)
          if (problem !== undefined) {
            return yield* new ValidationError({
              message: problem,
              details: [bodyIssue("dataSchema", problem)]
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
        // A type already stored is kept as it is, so it is not checked again either: compiling a schema is most of
        // the cost of seeding, paid at every start otherwise.
        seed: (entries) =>
          Effect.forEach(
            entries,
            (input) =>
              Effect.flatMap(store.find(input.type), (stored) =>
                stored !== undefined
                  ? Effect.void
                  : checked(input).pipe(
                      Effect.flatMap(store.insertIfAbsent),
                      // A producer this server does not register (a first-party service left out) keeps its types out.
                      Effect.catchTag("ValidationError", (error) =>
                        Effect.logWarning(`event catalog: ${input.type} not seeded: ${error.message}`)
                      )
                    )
              ),
            { discard: true }
          ),
        find: store.find,
        list: store.list,
        checkData: (entry, data) => {
          let validate: ValidateFunction
          try {
            validate = validatorFor(entry)
          } catch {
            // A schema stored before patterns ran on RE2 that RE2 cannot run: refused until an operator replaces it.
            return [bodyIssue("data", "cannot be checked until its type's schema is replaced")]
          }
          if (validate(data)) return []
          return (validate.errors ?? []).slice(0, maxIssues).map(toIssue)
        }
      })
    })
  )
}
