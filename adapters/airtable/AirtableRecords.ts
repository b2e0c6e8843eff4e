import { Clock, Effect, Schema } from "effect"
import { UpstreamError } from "../../core/kernel/Errors.ts"
import type { FieldValue, Fields, StoredRecord, Table } from "../../core/tasks/RecordStore.ts"
import type { AirtableFailure, AirtableRequest } from "./AirtableClient.ts"
import { yesNoChoice, type AirtableField, type AirtableTable } from "./AirtableFields.ts"

/**
 * The task inbox's records as an Airtable base holds them: the answers' shapes, record ids, and each field's
 * value written and read through the field map (AirtableFields.ts).
 */

export const RawRecord = Schema.Struct({
  id: Schema.String,
  createdTime: Schema.optionalKey(Schema.String),
  fields: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
})
export type RawRecord = typeof RawRecord.Type
export const Records = Schema.Struct({ records: Schema.Array(RawRecord) })
export const Page = Schema.Struct({ records: Schema.Array(RawRecord), offset: Schema.optionalKey(Schema.String) })

/** Airtable's record ids: `rec` and 14 letters or digits. The task inbox knows collaborators' as `usr…`. */
const idTail = /^[A-Za-z0-9]{14}$/
const prefixOf = (table: Table) => (table === "collaborators" ? "usr" : "rec")
/** The base's id of a record the task inbox names `id`, or undefined when `id` cannot be one of this table. */
export const toAirtableId = (table: Table, id: string): string | undefined =>
  id.startsWith(prefixOf(table)) && idTail.test(id.slice(3)) ? `rec${id.slice(3)}` : undefined
export const fromAirtableId = (table: Table, id: string) => `${prefixOf(table)}${id.slice(3)}`

/** What the task inbox is told when the record store fails; the cause goes to the logs. */
export const upstreamError = (failure: AirtableFailure): UpstreamError =>
  new UpstreamError({
    message:
      failure.status === 429
        ? "The record store is busy; try again in a minute."
        : failure.status === 401 || failure.status === 403
          ? "The record store refused the service's access."
          : failure.status === 422
            ? "The record store refused the change."
            : "The record store is not responding.",
    cause: failure
  })

const linkedTableOf = (field: AirtableField): Table | undefined =>
  field.options !== undefined && "linkedTable" in field.options ? field.options.linkedTable : undefined

const isText = (field: AirtableField) =>
  field.type === "singleLineText" ||
  field.type === "multilineText" ||
  field.type === "email" ||
  field.type === "url" ||
  field.type === "singleSelect" ||
  field.type === "date" ||
  field.type === "dateTime"

/** A value the task inbox gave for a field of the wrong type: a defect of the caller, named for the logs. */
const misfit = (table: Table, key: string, value: unknown) =>
  new Error(`the record store's ${table}.${key} cannot hold ${Array.isArray(value) ? "a list" : typeof value}`)

/** One request to the store's base, through its client and limiter. */
export type SendToBase = <A>(request: AirtableRequest, answer: Schema.Decoder<A>) => Effect.Effect<A, AirtableFailure>

/** The base's tables through the field map: paths, fields to read, and records encoded and decoded. */
export type RecordCodec = ReturnType<typeof makeRecordCodec>

export const makeRecordCodec = (baseId: string, tables: ReadonlyArray<AirtableTable>) => {
  const specs = new Map(tables.map((spec) => [spec.table, spec] as const))
  const specOf = (table: Table) => {
    const spec = specs.get(table)
    if (spec === undefined) throw new Error(`the record store has no table for ${table}`)
    return spec
  }
  const managed = (spec: AirtableTable, kind: "recordId" | "createdAt") =>
    spec.fields.find((field) => field.managed === kind)
  const pathOf = (table: Table, recordId?: string) =>
    `${baseId}/${encodeURIComponent(specOf(table).name)}${recordId === undefined ? "" : `/${recordId}`}`

  // Creation times are this store's: strictly increasing in this process, so newest first is creation order.
  let lastCreated = 0
  const createdNow = Effect.map(Clock.currentTimeMillis, (now) => {
    lastCreated = Math.max(now, lastCreated + 1)
    return new Date(lastCreated).toISOString()
  })

  const encodeValue = (table: Table, field: AirtableField, value: FieldValue): unknown => {
    if (value === null) return field.type === "checkbox" ? false : field.type === "multipleRecordLinks" ? [] : null
    if (field.json === true) return JSON.stringify(value)
    if (field.yesNo === true) {
      if (typeof value !== "boolean") throw misfit(table, field.key ?? field.name, value)
      return yesNoChoice(field, value)
    }
    if (isText(field)) {
      if (typeof value !== "string") throw misfit(table, field.key ?? field.name, value)
      return value === "" ? null : value
    }
    if (field.type === "number") {
      if (typeof value !== "number") throw misfit(table, field.key ?? field.name, value)
      return value
    }
    if (field.type === "checkbox") {
      if (typeof value !== "boolean") throw misfit(table, field.key ?? field.name, value)
      return value
    }
    if (!Array.isArray(value) || !value.every((id): id is string => typeof id === "string")) {
      throw misfit(table, field.key ?? field.name, value)
    }
    const linked = linkedTableOf(field)
    return linked === undefined ? value : value.map((id) => toAirtableId(linked, id) ?? id)
  }

  const encode = (table: Table, fields: Fields): Record<string, unknown> => {
    const spec = specOf(table)
    const out: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(fields)) {
      const field = spec.fields.find((f) => f.key === key)
      if (field === undefined) throw new Error(`the record store has no field for ${table}.${key}`)
      out[field.name] = encodeValue(table, field, value)
    }
    return out
  }

  const decodeValue = (field: AirtableField, value: unknown): FieldValue | undefined => {
    if (value === undefined || value === null) return undefined
    if (field.json === true) {
      if (typeof value !== "string" || value === "") return undefined
      try {
        return JSON.parse(value) as FieldValue
      } catch {
        return value
      }
    }
    if (field.yesNo === true) {
      return value === yesNoChoice(field, true) ? true : value === yesNoChoice(field, false) ? false : undefined
    }
    if (isText(field)) return typeof value === "string" && value !== "" ? value : undefined
    if (field.type === "number") return typeof value === "number" ? value : undefined
    if (field.type === "checkbox") return value === true ? true : undefined
    if (!Array.isArray(value) || value.length === 0) return undefined
    const linked = linkedTableOf(field)
    const ids = value.filter((id): id is string => typeof id === "string")
    return linked === undefined ? ids : ids.map((id) => fromAirtableId(linked, id))
  }

  const decode = (table: Table, raw: RawRecord): StoredRecord => {
    const spec = specOf(table)
    const fields: Record<string, FieldValue> = {}
    const rawFields = raw.fields ?? {}
    for (const field of spec.fields) {
      if (field.key === undefined) continue
      const value = decodeValue(field, rawFields[field.name])
      if (value !== undefined) fields[field.key] = value
    }
    const created = managed(spec, "createdAt")
    const createdAt = created === undefined ? undefined : rawFields[created.name]
    return {
      id: fromAirtableId(table, raw.id),
      createdAt: typeof createdAt === "string" ? createdAt : (raw.createdTime ?? new Date(0).toISOString()),
      fields
    }
  }

  /** Fields a request reads: every field of the map, the store's own included. */
  const fieldParams = (table: Table) => specOf(table).fields.map((field) => ["fields[]", field.name] as const)

  const linkNames = new Map(
    [...specs.values()].map((spec) => [
      spec.table,
      new Set(spec.fields.filter((field) => field.type === "multipleRecordLinks").map((field) => field.name))
    ])
  )
  /** Whether encoded fields hold a link to some record. */
  const linksIn = (table: Table, fields: Record<string, unknown>) =>
    Object.entries(fields).some(
      ([name, value]) => linkNames.get(table)?.has(name) === true && Array.isArray(value) && value.length > 0
    )

  return { specs, specOf, managed, pathOf, createdNow, encode, decode, fieldParams, linksIn }
}
