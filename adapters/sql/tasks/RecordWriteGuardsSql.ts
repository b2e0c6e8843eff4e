import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Semaphore } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient, SqlError } from "effect/sql"
import { UpstreamError } from "../../../core/kernel/Errors.ts"
import { RecordWriteGuards, type HeldRecord, type WriteNote } from "../../../core/tasks/RecordWriteGuards.ts"
import { Database } from "../Database.ts"

const unavailable = (cause: unknown) =>
  new UpstreamError({ message: "The record store's write guard is not responding.", cause })

/** Connections of the guards' own pool: each write holds two (its lock, its notes), so half as many writes at once. */
const guardConnections = 8

/**
 * On a Postgres server: a pool of the guards' own, so that a write never waits for a connection the request's
 * own unit of work holds. The lock is the record's row of `tasks.record_locks`, locked in a transaction on
 * one connection for the whole write (a crashed holder's lock goes with its connection); the note is written
 * and removed on another connection, each statement committed at once, so a crash cannot undo it.
 *
 * On the embedded database (one process, one database session) there is no second connection to commit on
 * while a request's unit of work is open: the lock is this process's (the only one there is), and the note is
 * written with the request's unit of work (at once outside one), so a crash in the middle of a write undoes the
 * note with the unit. The link back from a created record still keeps a half-done create from being made twice.
 */
export const makeRecordWriteGuards = Effect.gen(function* () {
  const database = yield* Database
  const ambient = yield* SqlClient.SqlClient

  const readNote = (sql: SqlClient.SqlClient, table: string, id: string) =>
    Effect.map(
      sql<{ readonly note: unknown }>`
        SELECT note FROM tasks.record_write_notes WHERE table_name = ${table} AND record_id = ${id}`,
      (rows) => (rows[0] === undefined ? undefined : (parseJson(rows[0].note) as WriteNote))
    )
  const heldOn = (sql: SqlClient.SqlClient, table: string, id: string, pending: WriteNote | undefined): HeldRecord => ({
    pending,
    note: (note) =>
      sql`
        INSERT INTO tasks.record_write_notes (table_name, record_id, note)
        VALUES (${table}, ${id}, ${JSON.stringify(note)}::jsonb)
        ON CONFLICT (table_name, record_id) DO UPDATE SET note = excluded.note, noted_at = now()`.pipe(
        Effect.asVoid,
        Effect.mapError(unavailable)
      ),
    clear: sql`DELETE FROM tasks.record_write_notes WHERE table_name = ${table} AND record_id = ${id}`.pipe(
      Effect.asVoid,
      Effect.mapError(unavailable)
    )
  })

  if (database.kind === "embedded") {
    const locks = new Map<string, { readonly semaphore: Semaphore.Semaphore; users: number }>()
    const holding = <A, E>(table: string, id: string, write: (held: HeldRecord) => Effect.Effect<A, E>) =>
      Effect.suspend(() => {
        const key = `${table}\n${id}`
        let lock = locks.get(key)
        if (lock === undefined) {
          lock = { semaphore: Semaphore.makeUnsafe(1), users: 0 }
          locks.set(key, lock)
        }
        const held = lock
        held.users++
        return held.semaphore
          .withPermits(1)(
            Effect.flatMap(Effect.mapError(readNote(ambient, table, id), unavailable), (pending) =>
              write(heldOn(ambient, table, id, pending))
            )
          )
          .pipe(
            Effect.ensuring(
              Effect.sync(() => {
                if (--held.users === 0) locks.delete(key)
              })
            )
          )
      })
    return RecordWriteGuards.of({ holding })
  }

  const pg = yield* PgClient.PgClient
  const own = yield* PgClient.make({ ...pg.config, maxConnections: guardConnections }).pipe(
    Effect.provide(Reactivity.layer),
    Effect.orDie
  )
  const writers = yield* Semaphore.make(guardConnections / 2)
  // Statements of the notes run outside the lock's transaction, on a connection of their own.
  const outside = <A, E>(effect: Effect.Effect<A, E>) =>
    Effect.updateContext(effect, (context: Context.Context<never>) => Context.omit(own.transactionService)(context))
  const notes: SqlClient.SqlClient = own
  const holding = <A, E>(
    table: string,
    id: string,
    write: (held: HeldRecord) => Effect.Effect<A, E>
  ): Effect.Effect<A, E | UpstreamError> =>
    writers.withPermits(1)(
      own
        .withTransaction(
          Effect.gen(function* () {
            yield* own`
            INSERT INTO tasks.record_locks (table_name, record_id) VALUES (${table}, ${id})
            ON CONFLICT (table_name, record_id) DO NOTHING`.pipe(Effect.mapError(unavailable))
            yield* own`
            SELECT 1 FROM tasks.record_locks WHERE table_name = ${table} AND record_id = ${id} FOR UPDATE`.pipe(
              Effect.mapError(unavailable)
            )
            const pending = yield* outside(Effect.mapError(readNote(notes, table, id), unavailable))
            const held = heldOn(notes, table, id, pending)
            return yield* write({ pending, note: (note) => outside(held.note(note)), clear: outside(held.clear) })
          })
        )
        .pipe(
          // Beginning or ending the lock's transaction failed.
          Effect.mapError((error) => (error instanceof SqlError.SqlError ? unavailable(error) : error))
        )
    )
  return RecordWriteGuards.of({ holding })
})

const parseJson = (value: unknown): unknown => (typeof value === "string" ? JSON.parse(value) : value)

/**
 * The guards over the task inbox's database (its `tasks` schema migrated: tasks.record_locks and
 * tasks.record_write_notes, 0008_record_guards.ts).
 */
export const RecordWriteGuardsSql: Layer.Layer<
  RecordWriteGuards,
  never,
  Database | SqlClient.SqlClient | PgClient.PgClient
> = Layer.effect(RecordWriteGuards, makeRecordWriteGuards)
