import { Context, type Effect, Schema } from "effect"
import type { UpstreamError } from "../kernel/Errors.ts"
import type { Query } from "./Query.ts"

/** The tables of the upstream record store the task inbox keeps its data in. */
export const Tables = [
  "tasks",
  "collaborators",
  "projects",
  "clients",
  "outcomes",
  "meetings",
  "proposals",
  "settings"
] as const
export type Table = (typeof Tables)[number]

/** A field value as the store keeps it: JSON. Link fields are arrays of record ids; `null` is an empty field. */
export type FieldValue = string | number | boolean | null | ReadonlyArray<string> | { readonly [key: string]: unknown }
export type Fields = Readonly<Record<string, FieldValue>>

/** A record: an opaque id issued by the store (`usr…` for collaborators), its creation time and its fields. */
export interface StoredRecord {
  readonly id: string
  readonly createdAt: string
  readonly fields: Fields
}

export interface SelectOptions {
  /** At most this many records. */
  readonly limit?: number | undefined
}

/**
 * A conditional write found the record no longer holding the values it expected: nothing was written.
 * `fields` are the record's fields as they are now, so the caller can say what it became.
 */
export class RecordConflict extends Schema.TaggedError<RecordConflict>()("RecordConflict", {
  table: Schema.String,
  id: Schema.String,
  fields: Schema.Record(Schema.String, Schema.Unknown)
}) {}

/**
 * An update made only while the record still holds `expected`: each field named there must hold exactly
 * that value (JSON equality: arrays in order, objects member by member; a missing field holds `null`).
 */
export interface GuardedUpdate {
  readonly table: Table
  readonly id: string
  readonly expected: Fields
  readonly fields: Fields
}

/**
 * The one other write a guarded update brings with it (accepting a proposal creates or changes its task).
 * A created record links back to the guarded one: the store sets `fields[linkedBy]` to `[guarded id]`.
 */
export type FollowingWrite =
  | { readonly _tag: "Create"; readonly table: Table; readonly fields: Fields; readonly linkedBy: string }
  | { readonly _tag: "Update"; readonly table: Table; readonly id: string; readonly fields: Fields }

/**
 * The record-store port, shaped after an upstream record store (Airtable): records in tables, ids issued by
 * the store, partial updates (the fields given replace those stored, `null` clears one, the rest are kept),
 * and selection by a `Query` value that each adapter compiles. Selections answer newest first. A failing
 * upstream is an UpstreamError whose message is safe to show.
 *
 * Guarded writes are how a record changes state exactly once when callers race (a proposal is resolved once:
 * of several accepts and rejects arriving together, one wins and the others see what it became):
 *
 * - `updateIf` writes only while the record still holds its expected values, else fails with RecordConflict
 *   and writes nothing. Of callers racing with the same expectation, exactly one succeeds.
 * - `updateIfAndWrite` is a guarded update and its following write, committed together: both or neither,
 *   never the following write without the guarded update (no task without its accepted proposal, no
 *   accepted proposal without its task), and never twice.
 *
 * On a database both are one transaction, the condition in the `UPDATE ... WHERE`, so it holds across
 * processes and inside an enclosing unit of work (core/kernel/Transactions.ts) as well as on its own.
 * An upstream without transactions or compare-and-set (Airtable) meets the same contract this way:
 *
 * 1. Every write to a guarded record is made under a lock on that record which holds across instances (a
 *    row of the service's own database, locked for the whole write; a crashed holder's lock goes with its
 *    connection), and the record is read again under the lock: the expectation is checked against that
 *    read, never against one made before the lock was taken.
 * 2. Before its first upstream write, the adapter notes the whole write (the guarded update and its following
 *    write) where a crash cannot undo it (committed in the service's own database); it then makes the
 *    following write, then the guarded update, then clears the note. A created record carries the guarded
 *    record's id (`linkedBy`).
 * 3. A crash between those writes leaves the note. The next write to that record, by whoever takes the lock,
 *    first finishes the noted write: it creates the following record only when no record links back to the
 *    guarded one (so it is never made twice; writing an update's same values again changes nothing), makes
 *    the guarded update, clears the note, and only then checks its own expectation, which now meets the
 *    finished state (an accept found half done wins over a reject that arrives after the crash).
 *
 * The event outbox is a port of its own (core/events/ProducerOutbox.ts): an accept emits no event today; one that
 * did would be enqueued in the same unit of work, with an id derived from the proposal so that finishing a
 * half-done accept enqueues it once.
 */
export class RecordStore extends Context.Service<
  RecordStore,
  {
    readonly create: (table: Table, fields: Fields) => Effect.Effect<StoredRecord, UpstreamError>
    /**
     * As `create`, for a record nothing later in the unit of work reads back or changes (a new task the request
     * only answers): a store in the service's own database may send it with the unit's end, with the unit's
     * other writes (core/kernel/Transactions.ts). The answer is the record as it is stored.
     */
    readonly createUnread: (table: Table, fields: Fields) => Effect.Effect<StoredRecord, UpstreamError>
    /**
     * Whether the store's writes are part of the service's units of work (a store in the service's own
     * database): only then may creates share a transaction, since a group undone and run again would repeat
     * a write made anywhere else (core/kernel/Transactions.ts, `shared`).
     */
    readonly inUnits: boolean
    readonly get: (table: Table, id: string) => Effect.Effect<StoredRecord | undefined, UpstreamError>
    /** Answers the record after the update, or undefined when there is none with this id. */
    readonly update: (
      table: Table,
      id: string,
      fields: Fields
    ) => Effect.Effect<StoredRecord | undefined, UpstreamError>
    /** As `update`, made only while the record holds `expected` (else RecordConflict, nothing written). */
    readonly updateIf: (
      update: GuardedUpdate
    ) => Effect.Effect<StoredRecord | undefined, UpstreamError | RecordConflict>
    /**
     * The guarded update and its following write, together. Answers both records as written, or undefined
     * (nothing written) when the guarded record or the record to update does not exist.
     */
    readonly updateIfAndWrite: (
      update: GuardedUpdate,
      then: FollowingWrite
    ) => Effect.Effect<
      { readonly updated: StoredRecord; readonly written: StoredRecord } | undefined,
      UpstreamError | RecordConflict
    >
    readonly select: (
      table: Table,
      query: Query,
      options?: SelectOptions
    ) => Effect.Effect<ReadonlyArray<StoredRecord>, UpstreamError>
  }
>()("core/tasks/RecordStore") {}

/** Whether `fields` hold every expected value (a missing field holds null), compared as JSON values. */
export const holdsExpected = (fields: Fields, expected: Fields): boolean =>
  Object.entries(expected).every(([key, value]) => sameJson(Object.hasOwn(fields, key) ? fields[key] : null, value))

const sameJson = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]))
  }
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  return (
    ka.length === kb.length &&
    ka.every(
      (k) => Object.hasOwn(b, k) && sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])
    )
  )
}

const idAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

/**
 * A record id as the upstream writes them: a three-letter prefix (`usr` for collaborators, `rec` for the
 * rest) and 14 characters drawn from `random` (14 bytes, one per character).
 */
export const formatRecordId = (table: Table, random: Uint8Array): string =>
  (table === "collaborators" ? "usr" : "rec") +
  Array.from(random.slice(0, 14), (byte) => idAlphabet[byte % idAlphabet.length]).join("")
