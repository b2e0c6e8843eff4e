import { Context, type Effect } from "effect"
import type { UpstreamError } from "../kernel/Errors.ts"
import type { Query } from "./Query.ts"

/** The tables of the upstream record store the task inbox keeps its data in (document 3). */
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
 * The record-store port, shaped after an upstream record store (Airtable): records in tables, ids issued by
 * the store, partial updates (the fields given replace those stored, `null` clears one, the rest are kept),
 * and selection by a `Query` value that each adapter compiles. Selections answer newest first. A failing
 * upstream is an UpstreamError whose message is safe to show.
 */
export class RecordStore extends Context.Service<
  RecordStore,
  {
    readonly create: (table: Table, fields: Fields) => Effect.Effect<StoredRecord, UpstreamError>
    readonly get: (table: Table, id: string) => Effect.Effect<StoredRecord | undefined, UpstreamError>
    /** Answers the record after the update, or undefined when there is none with this id. */
    readonly update: (
      table: Table,
      id: string,
      fields: Fields
    ) => Effect.Effect<StoredRecord | undefined, UpstreamError>
    readonly select: (
      table: Table,
      query: Query,
      options?: SelectOptions
    ) => Effect.Effect<ReadonlyArray<StoredRecord>, UpstreamError>
  }
>()("core/tasks/RecordStore") {}

const idAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

/**
 * A record id as the upstream writes them: a three-letter prefix (`usr` for collaborators, `rec` for the
 * rest) and 14 characters drawn from `random` (14 bytes, one per character).
 */
export const formatRecordId = (table: Table, random: Uint8Array): string =>
  (table === "collaborators" ? "usr" : "rec") +
  Array.from(random.slice(0, 14), (byte) => idAlphabet[byte % idAlphabet.length]).join("")
