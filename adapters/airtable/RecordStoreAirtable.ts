import { Clock, Effect, Layer, type Redacted, Schema } from "effect"
import { UpstreamError } from "../../core/kernel/Errors.ts"
import * as Q from "../../core/tasks/Query.ts"
import {
  holdsExpected,
  RecordConflict,
  RecordStore,
  type FieldValue,
  type Fields,
  type FollowingWrite,
  type GuardedUpdate,
  type StoredRecord,
  type Table
} from "../../core/tasks/RecordStore.ts"
import { makeAirtableBatcher } from "./AirtableBatcher.ts"
import { AirtableClient, AirtableFailure, type AirtableRequest } from "./AirtableClient.ts"
import { airtableTables, yesNoChoice, type AirtableField, type AirtableTable } from "./AirtableFields.ts"
import { compileFormula } from "./AirtableFormula.ts"
import { RecordWriteGuards, type HeldRecord, type WriteNote } from "../../core/tasks/RecordWriteGuards.ts"

export interface RecordStoreAirtableConfig {
  readonly token: Redacted.Redacted<string>
  readonly baseId: string
  /** The field map (AirtableFields.ts). Default: every table under its default name. */
  readonly tables?: ReadonlyArray<AirtableTable> | undefined
}

const RawRecord = Schema.Struct({
  id: Schema.String,
  createdTime: Schema.optionalKey(Schema.String),
  fields: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
})
type RawRecord = typeof RawRecord.Type
const Records = Schema.Struct({ records: Schema.Array(RawRecord) })
const Page = Schema.Struct({ records: Schema.Array(RawRecord), offset: Schema.optionalKey(Schema.String) })

/** Airtable's record ids: `rec` and 14 letters or digits. The task inbox knows collaborators' as `usr…`. */
const idTail = /^[A-Za-z0-9]{14}$/
const prefixOf = (table: Table) => (table === "collaborators" ? "usr" : "rec")
/** The base's id of a record the task inbox names `id`, or undefined when `id` cannot be one of this table. */
export const toAirtableId = (table: Table, id: string): string | undefined =>
  id.startsWith(prefixOf(table)) && idTail.test(id.slice(3)) ? `rec${id.slice(3)}` : undefined
const fromAirtableId = (table: Table, id: string) => `${prefixOf(table)}${id.slice(3)}`

/** What the task inbox is told when the record store fails; the cause goes to the logs. */
const upstreamError = (failure: AirtableFailure): UpstreamError =>
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

/**
 * The RecordStore port over an Airtable base (docs/airtable.md): each table and field through the field map
 * (AirtableFields.ts), every request through the base's one limiter (AirtableClient.ts). Empty values are not
 * kept by Airtable, so they read back missing (an empty text or list, an unticked box, a cleared field).
 *
 * - Selections compile their query to `filterByFormula` (AirtableFormula.ts), sorted newest first on the
 *   `Created At` field this store writes, 100 records a page, following `offset`; the records read are
 *   filtered again with the query, so a part the formula cannot express never answers a wrong record.
 * - `get`s, `create`s and `update`s made at the same moment go together, 10 records a request.
 * - A link field holds record ids (a collaborator's `usr…` id is its record's `rec…` id). The primary field
 *   of a table other records are selected by a link to holds each record's own id, written after its create,
 *   so that a formula compares links through ids.
 * - Guarded writes hold the record's lock and note the write in the task inbox's own database
 *   (core/tasks/RecordWriteGuards.ts): read under the lock, checked, then the following write, then the guarded
 *   update; a write a crash left half done is finished by the next writer before it checks its own.
 */
export const makeRecordStoreAirtable = (config: RecordStoreAirtableConfig) =>
  Effect.gen(function* () {
    const client = yield* AirtableClient
    const guards = yield* RecordWriteGuards
    const specs = new Map((config.tables ?? airtableTables()).map((spec) => [spec.table, spec] as const))
    const specOf = (table: Table) => {
      const spec = specs.get(table)
      if (spec === undefined) throw new Error(`the record store has no table for ${table}`)
      return spec
    }
    const managed = (spec: AirtableTable, kind: "recordId" | "createdAt") =>
      spec.fields.find((field) => field.managed === kind)
    const pathOf = (table: Table, recordId?: string) =>
      `${config.baseId}/${encodeURIComponent(specOf(table).name)}${recordId === undefined ? "" : `/${recordId}`}`

    const send = <A>(request: AirtableRequest, answer: Schema.Decoder<A>) =>
      client.send(config.token, config.baseId, request, answer)

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

    const notFound = (failure: AirtableFailure) => failure.status === 404
    const splittable = (failure: AirtableFailure) =>
      failure.status >= 400 && failure.status < 500 && failure.status !== 429

    const getMany = (table: Table, ids: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        if (ids.length === 1) {
          const one = yield* send({ method: "GET", path: pathOf(table, ids[0]!), idempotent: true }, RawRecord).pipe(
            Effect.map((raw) => decode(table, raw)),
            Effect.catchIf(notFound, () => Effect.succeed(undefined))
          )
          return [one]
        }
        const formula = `OR(${ids.map((id) => `RECORD_ID()='${id}'`).join(",")})`
        const page = yield* send(
          {
            method: "GET",
            path: pathOf(table),
            urlParams: [["filterByFormula", formula], ["pageSize", "100"], ...fieldParams(table)],
            idempotent: true
          },
          Page
        )
        const byId = new Map(page.records.map((raw) => [raw.id, decode(table, raw)] as const))
        return ids.map((id) => byId.get(id))
      })

    const linkNames = new Map(
      [...specs.values()].map((spec) => [
        spec.table,
        new Set(spec.fields.filter((field) => field.type === "multipleRecordLinks").map((field) => field.name))
      ])
    )
    const linksIn = (table: Table, fields: Record<string, unknown>) =>
      Object.entries(fields).some(
        ([name, value]) => linkNames.get(table)?.has(name) === true && Array.isArray(value) && value.length > 0
      )
    type WriteItem = { readonly id?: string; readonly fields: Record<string, unknown> }
    const writeMany = (table: Table, method: "POST" | "PATCH", items: ReadonlyArray<WriteItem>) =>
      Effect.map(
        send(
          {
            method,
            path: pathOf(table),
            // Typecast lets a select take a canonical value its base lacks; never with links, where it would
            // make a record of a text it does not find.
            body: { records: items, typecast: !items.some((item) => linksIn(table, item.fields)) },
            // An update sent twice changes nothing more; a create sent twice is two records.
            idempotent: method === "PATCH"
          },
          Records
        ),
        (answer): ReadonlyArray<RawRecord | undefined> =>
          method === "POST" ? answer.records : items.map((item) => answer.records.find((raw) => raw.id === item.id))
      )

    // Per table: reads of one record (alone a GET, several at once one list by RECORD_ID()), creates and
    // updates, each gathered 10 to a request.
    const batchers = new Map(
      yield* Effect.forEach([...specs.keys()], (table) =>
        Effect.gen(function* () {
          const getter = yield* makeAirtableBatcher({
            send: (ids: ReadonlyArray<string>) => getMany(table, ids),
            splittable
          })
          const creator = yield* makeAirtableBatcher({
            send: (items: ReadonlyArray<WriteItem>) => writeMany(table, "POST", items),
            splittable
          })
          const updater = yield* makeAirtableBatcher({
            send: (items: ReadonlyArray<WriteItem>) => writeMany(table, "PATCH", items),
            splittable
          })
          return [table, { getter, creator, updater }] as const
        })
      )
    )
    const batchersOf = (table: Table) => {
      const found = batchers.get(table)
      if (found === undefined) throw new Error(`the record store has no table for ${table}`)
      return found
    }

    const get = (table: Table, id: string) =>
      Effect.gen(function* () {
        const recordId = toAirtableId(table, id)
        if (recordId === undefined) return undefined
        return yield* batchersOf(table).getter(recordId)
      })

    const create = (table: Table, fields: Fields) =>
      Effect.gen(function* () {
        const spec = specOf(table)
        const encoded = encode(table, fields)
        const created = managed(spec, "createdAt")
        if (created !== undefined) encoded[created.name] = yield* createdNow
        const raw = yield* batchersOf(table).creator({ fields: encoded })
        if (raw === undefined) return yield* new AirtableFailure({ status: 0, type: "NO_RECORD", retryable: false })
        const own = managed(spec, "recordId")
        if (own === undefined) return decode(table, raw)
        // The record's own id in its primary field, for formulas comparing links through ids.
        const named = yield* batchersOf(table).updater({
          id: raw.id,
          fields: { [own.name]: fromAirtableId(table, raw.id) }
        })
        return decode(table, named ?? raw)
      })

    const update = (table: Table, id: string, fields: Fields) =>
      Effect.gen(function* () {
        const recordId = toAirtableId(table, id)
        if (recordId === undefined) return undefined
        const raw = yield* batchersOf(table)
          .updater({ id: recordId, fields: encode(table, fields) })
          .pipe(
            // A record that is not there: 404, or 422 naming the row (Airtable answers either).
            Effect.catchIf(
              (failure) => failure.status === 404 || (failure.status === 422 && failure.type === "ROW_DOES_NOT_EXIST"),
              () => Effect.succeed(undefined)
            )
          )
        return raw === undefined ? undefined : decode(table, raw)
      })

    const select = (table: Table, query: Q.Query, limit: number | undefined) =>
      Effect.gen(function* () {
        const spec = specOf(table)
        const compiled = compileFormula(specs, table, query)
        const matches = Q.matches(query)
        const created = managed(spec, "createdAt")
        const base: Array<readonly [string, string]> = [["pageSize", "100"], ...fieldParams(table)]
        if (compiled.formula !== undefined) base.push(["filterByFormula", compiled.formula])
        if (created !== undefined) base.push(["sort[0][field]", created.name], ["sort[0][direction]", "desc"])
        if (compiled.exact && limit !== undefined) base.push(["maxRecords", String(limit)])
        const found: Array<StoredRecord> = []
        let offset: string | undefined = undefined
        do {
          const page: typeof Page.Type = yield* send(
            {
              method: "GET",
              path: pathOf(table),
              urlParams: offset === undefined ? base : [...base, ["offset", offset]],
              idempotent: true
            },
            Page
          )
          for (const raw of page.records) {
            const record = decode(table, raw)
            if (matches(record.fields)) found.push(record)
          }
          offset = page.offset
        } while (offset !== undefined && (limit === undefined || found.length < limit))
        return limit === undefined ? found : found.slice(0, limit)
      })

    /** Finishes a write a crash left half done: the following write (a create only if none links back), then the guarded update. */
    const finish = (held: HeldRecord) =>
      Effect.gen(function* () {
        const note = held.pending
        if (note === undefined) return
        yield* following(note)
        yield* update(note.update.table, note.update.id, note.update.fields)
        yield* held.clear
      })

    const following = (note: WriteNote) =>
      Effect.gen(function* () {
        const then = note.following
        if (then === undefined) return undefined
        if (then._tag === "Update") return yield* update(then.table, then.id, then.fields)
        const existing = yield* select(then.table, Q.has(then.linkedBy, note.update.id), 1)
        if (existing[0] !== undefined) return existing[0]
        return yield* create(then.table, { ...then.fields, [then.linkedBy]: [note.update.id] })
      })

    /** Under the record's lock: a pending write finished, the record read again and its expectation checked. */
    const guarded = <A, E>(
      update: GuardedUpdate,
      write: (held: HeldRecord) => Effect.Effect<A, E | AirtableFailure | UpstreamError>
    ) =>
      guards.holding(update.table, update.id, (held) =>
        Effect.gen(function* () {
          yield* finish(held)
          const current = yield* get(update.table, update.id)
          if (current === undefined) return undefined
          if (!holdsExpected(current.fields, update.expected)) {
            return yield* new RecordConflict({ table: update.table, id: update.id, fields: current.fields })
          }
          return yield* write({ ...held, pending: undefined })
        })
      )

    const orUpstream = <A, E>(effect: Effect.Effect<A, E | AirtableFailure>) =>
      effect.pipe(
        Effect.mapError((error) => (error instanceof AirtableFailure ? upstreamError(error) : error))
      ) as Effect.Effect<A, Exclude<E, AirtableFailure> | UpstreamError>

    return RecordStore.of({
      create: Effect.fn("RecordStoreAirtable.create")(function* (table: Table, fields: Fields) {
        return yield* orUpstream(create(table, fields))
      }),
      createUnread: (table, fields) => orUpstream(create(table, fields)),
      inUnits: false,
      get: Effect.fn("RecordStoreAirtable.get")(function* (table: Table, id: string) {
        return yield* orUpstream(get(table, id))
      }),
      update: Effect.fn("RecordStoreAirtable.update")(function* (table: Table, id: string, fields: Fields) {
        return yield* orUpstream(update(table, id, fields))
      }),
      updateIf: Effect.fn("RecordStoreAirtable.updateIf")(function* (u: GuardedUpdate) {
        return yield* orUpstream(guarded(u, () => update(u.table, u.id, u.fields)))
      }),
      updateIfAndWrite: Effect.fn("RecordStoreAirtable.updateIfAndWrite")(function* (
        u: GuardedUpdate,
        then: FollowingWrite
      ) {
        return yield* orUpstream(
          guarded(u, (held) =>
            Effect.gen(function* () {
              if (then._tag === "Update" && (yield* get(then.table, then.id)) === undefined) return undefined
              const note: WriteNote = { update: u, following: then }
              yield* held.note(note)
              const written = yield* following(note)
              const updated = yield* update(u.table, u.id, u.fields)
              yield* held.clear
              if (written === undefined || updated === undefined) return undefined
              return { updated, written }
            })
          )
        )
      }),
      select: Effect.fn("RecordStoreAirtable.select")(function* (table: Table, query: Q.Query, options) {
        return yield* orUpstream(select(table, query, options?.limit))
      })
    })
  })

/** The task inbox's records in an Airtable base, through the client and write guards provided. */
export const RecordStoreAirtable = (
  config: RecordStoreAirtableConfig
): Layer.Layer<RecordStore, never, AirtableClient | RecordWriteGuards> =>
  Layer.effect(RecordStore, makeRecordStoreAirtable(config))
