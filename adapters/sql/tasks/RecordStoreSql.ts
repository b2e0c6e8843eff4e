import { Clock, Data, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema, type Statement } from "effect/sql"
import { randomBytes } from "node:crypto"
import { UpstreamError } from "../../../core/kernel/Errors.ts"
import { writeBehind } from "../units/HeldWrites.ts"
import type { Query } from "../../../core/tasks/Query.ts"
import {
  formatRecordId,
  RecordConflict,
  RecordStore,
  type Fields,
  type GuardedUpdate,
  type StoredRecord,
  type Table
} from "../../../core/tasks/RecordStore.ts"

const Row = Schema.Struct({
  id: Schema.String,
  created_at: Schema.Date,
  fields: Schema.Record(Schema.String, Schema.Unknown)
})

const toRecord = (row: typeof Row.Type): StoredRecord => ({
  id: row.id,
  createdAt: row.created_at.toISOString(),
  fields: row.fields as Fields
})

/** The user sees a generic message; the cause is kept for the logs. */
const upstream = (cause: unknown) => new UpstreamError({ message: "The record store is not responding.", cause })

/** The record that a following write updates is gone: the guarded update is undone with it. */
class FollowingRecordMissing extends Data.TaggedError("FollowingRecordMissing")<{}> {}

/**
 * A query value as a WHERE clause over `fields` (jsonb): `Eq` and `Has` are containment (`@>`) tests, text
 * comparisons are NULL-safe so a missing field behaves as in core/tasks/Query.ts `matches`. Every name and
 * value is a parameter.
 */
export const compileQuery = (sql: SqlClient.SqlClient, query: Query): Statement.Fragment => {
  switch (query._tag) {
    case "All":
      return sql`TRUE`
    case "Eq":
      return sql`fields @> ${JSON.stringify({ [query.field]: query.value })}::jsonb`
    case "Has":
      return sql`fields @> ${JSON.stringify({ [query.field]: [query.id] })}::jsonb`
    case "AtLeast":
      return sql`coalesce((fields ->> (${query.field}::text)) COLLATE "C" >= (${query.value}::text) COLLATE "C", false)`
    case "Contains":
      return sql`coalesce(strpos(lower(fields ->> (${query.field}::text)), lower(${query.text}::text)) > 0, false)`
    case "Not":
      return sql`NOT (${compileQuery(sql, query.query)})`
    case "And":
      return query.queries.length === 0 ? sql`TRUE` : sql.and(query.queries.map((q) => compileQuery(sql, q)))
    case "Or":
      return query.queries.length === 0 ? sql`FALSE` : sql.or(query.queries.map((q) => compileQuery(sql, q)))
  }
}

/**
 * A guarded update's expectation as a WHERE clause: each field equal as jsonb (arrays in order, objects member
 * by member), a missing field read as JSON null.
 */
const holdsExpected = (sql: SqlClient.SqlClient, expected: Fields): Statement.Fragment => {
  const entries = Object.entries(expected)
  return entries.length === 0
    ? sql`TRUE`
    : sql.and(
        entries.map(
          ([field, value]) => sql`coalesce(fields -> (${field}::text), 'null'::jsonb) = ${JSON.stringify(value)}::jsonb`
        )
      )
}

/**
 * The RecordStore port over `tasks.records` (0002_records.ts): the task inbox's records kept in its own
 * Postgres schema. Ids are issued here, as an upstream store issues them. SQL failures are UpstreamErrors.
 * A guarded update is one `UPDATE ... WHERE` with its expectation in the WHERE clause: a racing writer waits
 * for the row's lock and then finds the expectation false. With its following write it is one transaction
 * (a savepoint inside an enclosing one).
 */
export const RecordStoreSql: Layer.Layer<RecordStore, never, SqlClient.SqlClient> = Layer.effect(
  RecordStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const insertRow = SqlSchema.findOne({
      Request: Schema.Struct({
        table: Schema.String,
        id: Schema.String,
        createdAt: Schema.String,
        fields: Schema.String
      }),
      Result: Row,
      execute: (r) => sql`
        INSERT INTO tasks.records (table_name, id, created_at, fields)
        VALUES (${r.table}, ${r.id}, ${r.createdAt}::timestamptz, ${r.fields}::jsonb)
        RETURNING id, created_at, fields`
    })

    const getRow = SqlSchema.findOneOption({
      Request: Schema.Struct({ table: Schema.String, id: Schema.String }),
      Result: Row,
      execute: (r) => sql`
        SELECT id, created_at, fields FROM tasks.records WHERE table_name = ${r.table} AND id = ${r.id}`
    })

    const updateRow = SqlSchema.findOneOption({
      Request: Schema.Struct({ table: Schema.String, id: Schema.String, fields: Schema.String }),
      Result: Row,
      execute: (r) => sql`
        UPDATE tasks.records SET fields = fields || ${r.fields}::jsonb
        WHERE table_name = ${r.table} AND id = ${r.id}
        RETURNING id, created_at, fields`
    })

    const guardedRow = (update: GuardedUpdate) =>
      Effect.flatMap(
        sql`
          UPDATE tasks.records SET fields = fields || ${JSON.stringify(update.fields)}::jsonb
          WHERE table_name = ${update.table} AND id = ${update.id} AND ${holdsExpected(sql, update.expected)}
          RETURNING id, created_at, fields`,
        Schema.decodeUnknownEffect(Schema.Array(Row))
      )

    /** The guarded update: the record as written, undefined when there is none, else RecordConflict. */
    const updateGuarded = Effect.fnUntraced(function* (update: GuardedUpdate) {
      const rows = yield* guardedRow(update)
      if (rows[0] !== undefined) return toRecord(rows[0])
      const current = yield* getRow({ table: update.table, id: update.id })
      if (current._tag === "None") return undefined
      return yield* new RecordConflict({ table: update.table, id: update.id, fields: current.value.fields })
    })

    const create = Effect.fnUntraced(function* (table: Table, fields: Fields) {
      const createdAt = new Date(yield* Clock.currentTimeMillis).toISOString()
      const id = formatRecordId(table, randomBytes(14))
      return toRecord(yield* insertRow({ table, id, createdAt, fields: JSON.stringify(fields) }))
    })

    /**
     * A record the unit does not read back: its row goes with the unit's last statement (`writeBehind`), or at
     * once outside a unit. Its answer is the row as it reads back: the time as stored, the fields as JSON.
     */
    const createUnread = Effect.fnUntraced(function* (table: Table, fields: Fields) {
      const createdAt = new Date(yield* Clock.currentTimeMillis).toISOString()
      const id = formatRecordId(table, randomBytes(14))
      const json = JSON.stringify(fields)
      yield* writeBehind(
        sql,
        sql`INSERT INTO tasks.records (table_name, id, created_at, fields)
          VALUES (${table}, ${id}, ${createdAt}::timestamptz, ${json}::jsonb)`
      )
      return { id, createdAt, fields: JSON.parse(json) as Fields } satisfies StoredRecord
    })

    /** SQL and decode failures are UpstreamErrors; a conflict stays what it is. */
    const orUpstream = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.mapError(effect, (e) => (e instanceof RecordConflict ? e : upstream(e)))

    return RecordStore.of({
      create: Effect.fn("RecordStoreSql.create")(function* (table, fields) {
        return yield* create(table, fields)
      }, Effect.mapError(upstream)),
      // On every task create: untraced (its row goes with the unit's statement).
      createUnread: (table, fields) => Effect.mapError(createUnread(table, fields), upstream),
      inUnits: true,
      get: Effect.fn("RecordStoreSql.get")(function* (table, id) {
        const row = yield* getRow({ table, id })
        return row._tag === "Some" ? toRecord(row.value) : undefined
      }, Effect.mapError(upstream)),
      update: Effect.fn("RecordStoreSql.update")(function* (table, id, fields) {
        const row = yield* updateRow({ table, id, fields: JSON.stringify(fields) })
        return row._tag === "Some" ? toRecord(row.value) : undefined
      }, Effect.mapError(upstream)),
      updateIf: Effect.fn("RecordStoreSql.updateIf")(function* (update) {
        return yield* updateGuarded(update)
      }, orUpstream),
      updateIfAndWrite: Effect.fn("RecordStoreSql.updateIfAndWrite")(function* (update, then) {
        const both = Effect.gen(function* () {
          const updated = yield* updateGuarded(update)
          if (updated === undefined) return undefined
          if (then._tag === "Create") {
            return { updated, written: yield* create(then.table, { ...then.fields, [then.linkedBy]: [update.id] }) }
          }
          const written = yield* updateRow({ table: then.table, id: then.id, fields: JSON.stringify(then.fields) })
          if (written._tag === "None") return yield* new FollowingRecordMissing()
          return { updated, written: toRecord(written.value) }
        })
        return yield* sql
          .withTransaction(both)
          .pipe(Effect.catchTag("FollowingRecordMissing", () => Effect.succeed(undefined)))
      }, orUpstream),
      select: Effect.fn("RecordStoreSql.select")(function* (table, query, options) {
        const limit = options?.limit === undefined ? sql`` : sql`LIMIT ${options.limit}`
        const rows = yield* sql`
            SELECT id, created_at, fields FROM tasks.records
            WHERE table_name = ${table} AND ${compileQuery(sql, query)}
            ORDER BY seq DESC ${limit}`
        return (yield* Schema.decodeUnknownEffect(Schema.Array(Row))(rows)).map(toRecord)
      }, Effect.mapError(upstream))
    })
  })
)
