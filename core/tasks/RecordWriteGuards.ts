import { Context, type Effect } from "effect"
import type { UpstreamError } from "../kernel/Errors.ts"
import type { FollowingWrite, GuardedUpdate } from "./RecordStore.ts"

/** A guarded write in progress: the guarded update and its following write, if any. */
export interface WriteNote {
  readonly update: GuardedUpdate
  readonly following?: FollowingWrite | undefined
  /** The id of the record the following write created, once known (the record links back to the guarded one). */
  readonly created?: string | undefined
}

/** What a writer holding a record's lock may do with its note. */
export interface HeldRecord {
  /** The write a previous holder noted and did not finish (it crashed between its upstream writes). */
  readonly pending: WriteNote | undefined
  /** Notes the write about to be made, committed before it returns. */
  readonly note: (note: WriteNote) => Effect.Effect<void, UpstreamError>
  /** Removes the note once the write is whole. */
  readonly clear: Effect.Effect<void, UpstreamError>
}

/**
 * Locks and notes for writes to an upstream record store without transactions (an Airtable base), kept where a
 * crash cannot undo them: the task inbox's own database. How a store uses them: RecordStore's description.
 */
export class RecordWriteGuards extends Context.Service<
  RecordWriteGuards,
  {
    /** Runs `write` holding the record's lock: one writer per record at a time, across every instance. */
    readonly holding: <A, E>(
      table: string,
      id: string,
      write: (held: HeldRecord) => Effect.Effect<A, E>
    ) => Effect.Effect<A, E | UpstreamError>
  }
>()("core/tasks/RecordWriteGuards") {}
