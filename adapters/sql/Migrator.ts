import { Effect, Layer, Schema } from "effect"
import { SqlClient, type SqlError, SqlSchema } from "effect/sql"

/** One step of a service schema's history. Once applied, its `id` and `name` never change. */
export interface Migration {
  readonly id: number
  readonly name: string
  readonly up: Effect.Effect<void, SqlError.SqlError, SqlClient.SqlClient>
}

export interface AppliedMigration {
  readonly id: number
  readonly name: string
}

const AppliedRow = Schema.Struct({ id: Schema.Number, name: Schema.String })

// Unquoted Postgres identifiers fold to lower case; keeping schema names lower case means `hub` in SQL
// written by hand and `sql("hub")` name the same schema.
const schemaName = /^[a-z_][a-z0-9_]{0,62}$/

const checkList = (schema: string, migrations: ReadonlyArray<Migration>): ReadonlyArray<Migration> => {
  if (!schemaName.test(schema)) throw new Error(`migrations: "${schema}" is not a lower-case schema name`)
  const seen = new Set<number>()
  for (const migration of migrations) {
    if (!Number.isSafeInteger(migration.id) || migration.id < 1) {
      throw new Error(`migrations for ${schema}: id ${migration.id} is not a positive integer`)
    }
    if (seen.has(migration.id)) throw new Error(`migrations for ${schema}: id ${migration.id} appears twice`)
    if (migration.name.length === 0) throw new Error(`migrations for ${schema}: id ${migration.id} has no name`)
    seen.add(migration.id)
  }
  return [...migrations].sort((a, b) => a.id - b.id)
}

/**
 * Brings `<schema>` up to date. When every migration we list is applied under its name, that is one read.
 * Otherwise it creates the schema and its `migrations` table, then applies each missing migration in id
 * order, each in its own transaction together with its bookkeeping row. Every transaction first takes a
 * transaction-scoped advisory lock keyed on the schema name and re-reads what is applied, so servers
 * starting together apply each migration once. An applied id whose name differs from ours is a defect: the
 * database was migrated by different code. (An applied id we do not list, from a newer release, is left
 * alone.) A bad list (duplicate or non-positive ids, a schema name that is not a lower-case
 * identifier) is a defect too. Answers the migrations applied by this call.
 */
export const runMigrations = Effect.fn("runMigrations")(function* (
  schema: string,
  migrations: ReadonlyArray<Migration>
): Effect.fn.Return<ReadonlyArray<AppliedMigration>, SqlError.SqlError, SqlClient.SqlClient> {
  const ordered = yield* Effect.sync(() => checkList(schema, migrations))
  const sql = yield* SqlClient.SqlClient
  const table = sql`${sql(schema)}.migrations`
  const readApplied = SqlSchema.findAll({
    Request: Schema.Void,
    Result: AppliedRow,
    execute: () => sql`SELECT id, name FROM ${table} ORDER BY id`
  })

  // One locked transaction: answers the next migration to apply after applying it, or undefined when done.
  const step = sql.withTransaction(
    Effect.gen(function* () {
      yield* sql`SELECT pg_advisory_xact_lock(hashtext('hitl.migrations'), hashtext(${schema}))`
      yield* sql`CREATE SCHEMA IF NOT EXISTS ${sql(schema)}`
      yield* sql`CREATE TABLE IF NOT EXISTS ${table} (
        id integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`
      const applied = yield* readApplied(undefined).pipe(Effect.catchTag("SchemaError", Effect.die))
      const appliedNames = new Map(applied.map((row) => [row.id, row.name]))
      for (const migration of ordered) {
        const name = appliedNames.get(migration.id)
        if (name !== undefined && name !== migration.name) {
          return yield* Effect.die(
            new Error(
              `migrations for ${schema}: id ${migration.id} was applied as "${name}" but this code calls it ` +
                `"${migration.name}"; refusing to run against a database migrated by different code`
            )
          )
        }
      }
      const next = ordered.find((migration) => !appliedNames.has(migration.id))
      if (next === undefined) return undefined
      yield* next.up
      yield* sql`INSERT INTO ${table} (id, name) VALUES (${next.id}, ${next.name})`
      return { id: next.id, name: next.name }
    })
  )

  // The usual start finds everything applied: one read, no transaction, no lock. A schema or table that is
  // not there yet (a new database) fails the read, and the locked path below creates it.
  const upToDate = yield* readApplied(undefined).pipe(
    Effect.map((applied) => {
      const appliedNames = new Map(applied.map((row) => [row.id, row.name]))
      return ordered.every((migration) => appliedNames.get(migration.id) === migration.name)
    }),
    Effect.orElseSucceed(() => false)
  )
  if (upToDate) return []

  // Two servers creating a new schema at once can still meet in the catalog: Postgres checks `IF NOT EXISTS`
  // against the catalog as the session last saw it, which the lock does not refresh. Such a step did
  // nothing; it runs again and sees the schema the other created.
  const stepOnce = step.pipe(
    Effect.retry({
      while: (error) => error.reason._tag === "UniqueViolation",
      times: 3
    })
  )

  const done: Array<AppliedMigration> = []
  while (true) {
    const applied = yield* stepOnce
    if (applied === undefined) return done
    yield* Effect.logInfo(`applied migration ${schema} ${applied.id} ${applied.name}`)
    done.push(applied)
  }
})

/** Runs the migrations when the layer is built (server start-up): anything built on it sees the schema current. */
export const migrationsLayer = (
  schema: string,
  migrations: ReadonlyArray<Migration>
): Layer.Layer<never, SqlError.SqlError, SqlClient.SqlClient> => Layer.effectDiscard(runMigrations(schema, migrations))
