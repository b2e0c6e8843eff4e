import { Effect, Layer, type Redacted, type Schema } from "effect"
import type { UpstreamError } from "../../core/kernel/Errors.ts"
import type * as Q from "../../core/tasks/Query.ts"
import {
  RecordStore,
  type Fields,
  type FollowingWrite,
  type GuardedUpdate,
  type Table
} from "../../core/tasks/RecordStore.ts"
import { RecordWriteGuards } from "../../core/tasks/RecordWriteGuards.ts"
import { AirtableClient, AirtableFailure, type AirtableRequest } from "./AirtableClient.ts"
import { airtableTables, type AirtableTable } from "./AirtableFields.ts"
import { makeAirtableGuardedWrites } from "./AirtableGuardedWrites.ts"
import { makeRecordCodec, upstreamError } from "./AirtableRecords.ts"
import { makeAirtableSelection } from "./AirtableSelection.ts"
import { makeAirtableWrites } from "./AirtableWrites.ts"

export interface RecordStoreAirtableConfig {
  readonly token: Redacted.Redacted<string>
  readonly baseId: string
  /** The field map (AirtableFields.ts). Default: every table under its default name. */
  readonly tables?: ReadonlyArray<AirtableTable> | undefined
}

/**
 * The RecordStore port over an Airtable base (docs/airtable.md): each table and field through the field map
 * (AirtableFields.ts, AirtableRecords.ts), every request through the base's one limiter (AirtableClient.ts).
 * Empty values are not kept by Airtable, so they read back missing (an empty text or list, an unticked box, a
 * cleared field).
 *
 * - Selections compile their query to `filterByFormula`, 100 records a page, following `offset`, and filter
 *   again what they read (AirtableSelection.ts).
 * - `get`s, `create`s and `update`s made at the same moment go together, 10 records a request
 *   (AirtableWrites.ts). A link field holds record ids (a collaborator's `usr…` id is its record's `rec…` id).
 * - Guarded writes hold the record's lock and note the write in the task inbox's own database
 *   (AirtableGuardedWrites.ts).
 */
export const makeRecordStoreAirtable = (config: RecordStoreAirtableConfig) =>
  Effect.gen(function* () {
    const client = yield* AirtableClient
    const guards = yield* RecordWriteGuards
    const codec = makeRecordCodec(config.baseId, config.tables ?? airtableTables())
    const send = <A>(request: AirtableRequest, answer: Schema.Decoder<A>) =>
      client.send(config.token, config.baseId, request, answer)

    const { getMany, select } = makeAirtableSelection(send, codec)
    const { get, create, update } = yield* makeAirtableWrites(send, codec, getMany)
    const { updateIf, updateIfAndWrite } = makeAirtableGuardedWrites(guards, { get, create, update, select })

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
        return yield* orUpstream(updateIf(u))
      }),
      updateIfAndWrite: Effect.fn("RecordStoreAirtable.updateIfAndWrite")(function* (
        u: GuardedUpdate,
        then: FollowingWrite
      ) {
        return yield* orUpstream(updateIfAndWrite(u, then))
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
