import { Duration, Effect, type Redacted, Schema } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { AirtableLimiter } from "./AirtableLimiter.ts"

/**
 * A base's schema against the one the task inbox expects (AirtableFields.ts): `describeBase` reads it through
 * the metadata API, `planBase` compares (pure), `ensureBase` creates what is missing, `checkBase` refuses a
 * base that lacks something, naming every table and field it lacks.
 */

/** A field the task inbox expects. A link field names the expected table it points at: `{linkedTable}`. */
export interface ExpectedField {
  readonly name: string
  readonly type: string
  readonly options?: object | undefined
}

/** A table the task inbox expects: `table` is how the field map's links name it, `name` its name in the base. */
export interface ExpectedTable {
  readonly table: string
  readonly name: string
  /** The first is the primary field of a table the setup creates. */
  readonly fields: ReadonlyArray<ExpectedField>
}

const FieldModel = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  type: Schema.String,
  options: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
})
const TableModel = Schema.Struct({ id: Schema.String, name: Schema.String, fields: Schema.Array(FieldModel) })
const BaseSchema = Schema.Struct({ tables: Schema.Array(TableModel) })

/** A base's tables and fields, as the metadata API lists them. */
export type BaseSchema = typeof BaseSchema.Type

/** A table or field the base has, but not as the task inbox needs it; the setup cannot change it. */
export interface Mismatch {
  readonly table: string
  readonly field?: string | undefined
  readonly problem: string
}

/** What a base lacks: tables to create (with their fields but the links), then fields to create, links last. */
export interface BasePlan {
  readonly tables: ReadonlyArray<{ readonly name: string; readonly fields: ReadonlyArray<ExpectedField> }>
  readonly fields: ReadonlyArray<{ readonly table: string; readonly field: ExpectedField }>
  readonly mismatches: ReadonlyArray<Mismatch>
}

const linkedTableOf = (field: ExpectedField): string | undefined =>
  field.type === "multipleRecordLinks" && "linkedTable" in (field.options ?? {})
    ? String((field.options as { linkedTable: unknown }).linkedTable)
    : undefined

const isLink = (field: ExpectedField) => field.type === "multipleRecordLinks"

/**
 * What the base lacks of `expected`. Names are matched exactly; a table or field whose name differs only in
 * case, or a field of another type or linking to another table, is a mismatch (the base cannot hold a second
 * name differing only in case, and the setup never changes what exists).
 */
export const planBase = (expected: ReadonlyArray<ExpectedTable>, actual: BaseSchema): BasePlan => {
  const tables: Array<BasePlan["tables"][number]> = []
  const fields: Array<BasePlan["fields"][number]> = []
  const links: Array<BasePlan["fields"][number]> = []
  const mismatches: Array<Mismatch> = []
  const nameOfTable = (table: string) => expected.find((t) => t.table === table)?.name
  for (const want of expected) {
    const have = actual.tables.find((t) => t.name === want.name)
    if (have === undefined) {
      const other = actual.tables.find((t) => t.name.toLowerCase() === want.name.toLowerCase())
      if (other !== undefined) {
        mismatches.push({ table: want.name, problem: `the base has a table named "${other.name}" instead` })
        continue
      }
      tables.push({ name: want.name, fields: want.fields.filter((f) => !isLink(f)) })
      for (const field of want.fields.filter(isLink)) links.push({ table: want.name, field })
      continue
    }
    for (const field of want.fields) {
      const found = have.fields.find((f) => f.name === field.name)
      if (found === undefined) {
        const other = have.fields.find((f) => f.name.toLowerCase() === field.name.toLowerCase())
        if (other !== undefined) {
          mismatches.push({ table: want.name, field: field.name, problem: `named "${other.name}" in the base` })
        } else (isLink(field) ? links : fields).push({ table: want.name, field })
        continue
      }
      if (found.type !== field.type) {
        mismatches.push({
          table: want.name,
          field: field.name,
          problem: `is a ${found.type} field; the task inbox needs ${field.type}`
        })
        continue
      }
      const linked = linkedTableOf(field)
      if (linked === undefined) continue
      const target = actual.tables.find((t) => t.name === nameOfTable(linked))
      if (target !== undefined && found.options?.linkedTableId !== target.id) {
        mismatches.push({ table: want.name, field: field.name, problem: `links to another table than ${target.name}` })
      }
    }
  }
  return { tables, fields: [...fields, ...links], mismatches }
}

/** Whether the base has everything the task inbox needs as it needs it. */
export const isComplete = (plan: BasePlan) =>
  plan.tables.length === 0 && plan.fields.length === 0 && plan.mismatches.length === 0

/** Every table and field the plan names, one per line, for people to read. */
export const describePlan = (plan: BasePlan): ReadonlyArray<string> => [
  ...plan.tables.map((t) => `table ${t.name} (with ${t.fields.map((f) => f.name).join(", ")})`),
  ...plan.fields.map((f) => `field ${f.table}.${f.field.name} (${f.field.type})`),
  ...plan.mismatches.map(
    (m) =>
      `${m.field === undefined ? "table" : "field"} ${m.table}${m.field === undefined ? "" : `.${m.field}`}: ${m.problem}`
  )
]

/** The base lacks tables or fields the task inbox needs, or has them otherwise than it needs them. */
export class BaseIncomplete extends Schema.TaggedError<BaseIncomplete>()("BaseIncomplete", {
  missingTables: Schema.Array(Schema.String),
  missingFields: Schema.Array(Schema.String),
  mismatches: Schema.Array(Schema.String)
}) {
  override get message() {
    const parts = [
      this.missingTables.length === 0 ? "" : `missing tables: ${this.missingTables.join(", ")}`,
      this.missingFields.length === 0 ? "" : `missing fields: ${this.missingFields.join(", ")}`,
      this.mismatches.length === 0 ? "" : `fields to correct by hand: ${this.mismatches.join("; ")}`
    ]
    return `The base does not hold what the task inbox needs. ${parts.filter((p) => p !== "").join("; ")}`
  }
}

/** The metadata API refused or did not answer. `message` is for the operator running the setup. */
export class BaseSchemaFailure extends Schema.TaggedError<BaseSchemaFailure>()("BaseSchemaFailure", {
  status: Schema.Number,
  message: Schema.String
}) {}

export interface AirtableBaseConfig {
  /** The API's origin, `https://api.airtable.com` unless pointed at another host (a local stand-in). */
  readonly endpointUrl: string
  readonly baseId: string
  readonly token: Redacted.Redacted<string>
  /** Per request. Default 30 s. */
  readonly timeoutMillis?: number | undefined
}

const ErrorBody = Schema.Struct({
  error: Schema.Union([
    Schema.String,
    Schema.Struct({ type: Schema.optionalKey(Schema.String), message: Schema.optionalKey(Schema.String) })
  ])
})

const failureFor = (status: number, body: unknown): BaseSchemaFailure => {
  const decoded = Schema.decodeUnknownOption(ErrorBody)(body)
  const error = decoded._tag === "Some" ? decoded.value.error : undefined
  const said = error === undefined ? "" : typeof error === "string" ? error : [error.type, error.message].join(": ")
  const message =
    status === 401
      ? "The token was refused (AIRTABLE_TOKEN)."
      : status === 403
        ? "The token may not read or change this base's schema, or there is no such base: give it the scopes schema.bases:read and schema.bases:write and access to AIRTABLE_BASE_ID."
        : status === 0
          ? "The metadata API did not answer."
          : `The metadata API answered ${status}${said === "" ? "" : ` (${said})`}.`
  return new BaseSchemaFailure({ status, message })
}

/** One request to the metadata API, in its base's turn; a 429 pauses the base and the request waits it out. */
const request = <A>(
  config: AirtableBaseConfig,
  method: "GET" | "POST",
  path: string,
  answer: Schema.Decoder<A>,
  body?: unknown
) =>
  Effect.gen(function* () {
    const http = yield* HttpClient.HttpClient
    const limiter = yield* AirtableLimiter
    const url = `${config.endpointUrl.replace(/\/+$/, "")}/v0/meta/bases/${encodeURIComponent(config.baseId)}${path}`
    for (;;) {
      const turn = yield* Effect.result(limiter.turn(config.baseId))
      if (turn._tag === "Failure") {
        yield* Effect.sleep(turn.failure.retryAfterMillis)
        continue
      }
      let outgoing = HttpClientRequest.make(method)(url, { acceptJson: true }).pipe(
        HttpClientRequest.bearerToken(config.token)
      )
      if (body !== undefined) outgoing = HttpClientRequest.bodyJsonUnsafe(outgoing, body)
      const response = yield* http.execute(outgoing).pipe(
        Effect.flatMap((r) =>
          Effect.map(
            Effect.orElseSucceed(r.json, () => undefined),
            (json) => ({ r, json })
          )
        ),
        Effect.timeoutOrElse({
          duration: Duration.millis(config.timeoutMillis ?? 30_000),
          orElse: () => Effect.fail(failureFor(0, undefined))
        }),
        Effect.mapError((cause) => (cause instanceof BaseSchemaFailure ? cause : failureFor(0, undefined)))
      )
      const status = response.r.status
      if (status === 429) {
        const seconds = Number(response.r.headers["retry-after"])
        yield* limiter.pause(
          config.baseId,
          limiter.pauseAfter429(Number.isFinite(seconds) ? seconds * 1000 : undefined)
        )
        continue
      }
      if (status < 200 || status >= 300) return yield* failureFor(status, response.json)
      return yield* Schema.decodeUnknownEffect(answer)(response.json).pipe(
        Effect.mapError(
          () => new BaseSchemaFailure({ status, message: "The metadata API's answer could not be read." })
        )
      )
    }
  })

/** The base's tables and fields. */
export const describeBase = (config: AirtableBaseConfig) => request(config, "GET", "/tables", BaseSchema)

const fieldBody = (field: ExpectedField, tableIds: ReadonlyMap<string, string>) => {
  const linked = linkedTableOf(field)
  const options = linked === undefined ? field.options : { linkedTableId: tableIds.get(linked) }
  return { name: field.name, type: field.type, ...(options === undefined ? {} : { options }) }
}

/** What `ensureBase` made, and what it found but cannot change. */
export interface BaseReport {
  readonly createdTables: ReadonlyArray<string>
  /** `Table.Field`, for fields added to tables (not those a created table came with). */
  readonly createdFields: ReadonlyArray<string>
  readonly mismatches: ReadonlyArray<string>
}

/**
 * Creates the tables and fields the base lacks: each missing table with its fields but the links, then the
 * missing fields, links last (so the tables they point at exist). A base holding everything is left as it is:
 * run twice, the second run makes nothing. What exists otherwise than needed is reported, never changed.
 */
export const ensureBase = (config: AirtableBaseConfig, expected: ReadonlyArray<ExpectedTable>) =>
  Effect.gen(function* () {
    const actual = yield* describeBase(config)
    const plan = planBase(expected, actual)
    const idsByName = new Map(actual.tables.map((t) => [t.name, t.id]))
    for (const table of plan.tables) {
      const made = yield* request(config, "POST", "/tables", TableModel, {
        name: table.name,
        fields: table.fields.map((f) => fieldBody(f, new Map()))
      })
      idsByName.set(table.name, made.id)
    }
    const tableIds = new Map(expected.map((t) => [t.table, idsByName.get(t.name) ?? ""]))
    const createdFields: Array<string> = []
    for (const { table, field } of plan.fields) {
      yield* request(
        config,
        "POST",
        `/tables/${encodeURIComponent(idsByName.get(table)!)}/fields`,
        FieldModel,
        fieldBody(field, tableIds)
      )
      if (!plan.tables.some((t) => t.name === table)) createdFields.push(`${table}.${field.name}`)
    }
    return {
      createdTables: plan.tables.map((t) => t.name),
      createdFields,
      mismatches: describePlan({ tables: [], fields: [], mismatches: plan.mismatches })
    } satisfies BaseReport
  })

/** Fails with BaseIncomplete, naming every missing table and field, unless the base holds what is expected. */
export const checkBase = (config: AirtableBaseConfig, expected: ReadonlyArray<ExpectedTable>) =>
  Effect.gen(function* () {
    const plan = planBase(expected, yield* describeBase(config))
    if (isComplete(plan)) return
    return yield* new BaseIncomplete({
      missingTables: plan.tables.map((t) => t.name),
      missingFields: [
        ...plan.tables.flatMap((t) =>
          expected.find((e) => e.name === t.name)!.fields.map((f) => `${t.name}.${f.name}`)
        ),
        ...plan.fields
          .filter((f) => !plan.tables.some((t) => t.name === f.table))
          .map((f) => `${f.table}.${f.field.name}`)
      ],
      mismatches: describePlan({ tables: [], fields: [], mismatches: plan.mismatches })
    })
  })
