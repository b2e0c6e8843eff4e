import { Effect, type Scope } from "effect"
import type { Fields, StoredRecord, Table } from "../../core/tasks/RecordStore.ts"
import { makeAirtableBatcher } from "./AirtableBatcher.ts"
import { AirtableFailure } from "./AirtableClient.ts"
import {
  fromAirtableId,
  Records,
  toAirtableId,
  type RawRecord,
  type RecordCodec,
  type SendToBase
} from "./AirtableRecords.ts"

type WriteItem = { readonly id?: string; readonly fields: Record<string, unknown> }

/**
 * Single records read, created and updated: those asked for at the same moment go together, 10 records a
 * request (AirtableBatcher.ts), per table. The primary field of a table other records are selected by a link to
 * holds each record's own id, written after its create, so that a formula compares links through ids.
 */
export const makeAirtableWrites = (
  send: SendToBase,
  codec: RecordCodec,
  getMany: (
    table: Table,
    ids: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<StoredRecord | undefined>, AirtableFailure>
): Effect.Effect<
  {
    readonly get: (table: Table, id: string) => Effect.Effect<StoredRecord | undefined, AirtableFailure>
    readonly create: (table: Table, fields: Fields) => Effect.Effect<StoredRecord, AirtableFailure>
    readonly update: (
      table: Table,
      id: string,
      fields: Fields
    ) => Effect.Effect<StoredRecord | undefined, AirtableFailure>
  },
  never,
  Scope.Scope
> =>
  Effect.gen(function* () {
    const { specs, specOf, managed, pathOf, createdNow, encode, decode, linksIn } = codec
    const splittable = (failure: AirtableFailure) =>
      failure.status >= 400 && failure.status < 500 && failure.status !== 429

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

    return { get, create, update }
  })
