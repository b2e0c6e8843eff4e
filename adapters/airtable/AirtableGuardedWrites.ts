import { Effect } from "effect"
import type { UpstreamError } from "../../core/kernel/Errors.ts"
import * as Q from "../../core/tasks/Query.ts"
import {
  holdsExpected,
  RecordConflict,
  type Fields,
  type FollowingWrite,
  type GuardedUpdate,
  type StoredRecord,
  type Table
} from "../../core/tasks/RecordStore.ts"
import type { HeldRecord, RecordWriteGuards, WriteNote } from "../../core/tasks/RecordWriteGuards.ts"
import type { AirtableFailure } from "./AirtableClient.ts"

/** The store's plain reads and writes, which guarded writes are made of. */
export interface PlainWrites {
  readonly get: (table: Table, id: string) => Effect.Effect<StoredRecord | undefined, AirtableFailure>
  readonly create: (table: Table, fields: Fields) => Effect.Effect<StoredRecord, AirtableFailure>
  readonly update: (
    table: Table,
    id: string,
    fields: Fields
  ) => Effect.Effect<StoredRecord | undefined, AirtableFailure>
  readonly select: (
    table: Table,
    query: Q.Query,
    limit: number | undefined
  ) => Effect.Effect<ReadonlyArray<StoredRecord>, AirtableFailure>
}

/**
 * Guarded writes on a base without transactions (core/tasks/RecordStore.ts): each holds the record's lock and
 * notes the write in the task inbox's own database (core/tasks/RecordWriteGuards.ts): read under the lock,
 * checked, then the following write, then the guarded update; a write a crash left half done is finished by
 * the next writer before it checks its own.
 */
export const makeAirtableGuardedWrites = (guards: RecordWriteGuards["Service"], plain: PlainWrites) => {
  const { get, create, update, select } = plain

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

  const updateIf = (u: GuardedUpdate) => guarded(u, () => update(u.table, u.id, u.fields))

  const updateIfAndWrite = (u: GuardedUpdate, then: FollowingWrite) =>
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

  return { updateIf, updateIfAndWrite }
}
