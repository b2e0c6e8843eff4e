import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, References } from "effect"
import { SqlClient } from "effect/sql"
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { Database } from "../../adapters/sql/Database.ts"
import { imageMismatch, manifestOf, type EmbeddedImage } from "../../adapters/sql/EmbeddedImage.ts"
import { buildEmbeddedImage } from "../../adapters/sql/EmbeddedImageBuilder.ts"
import { runMigrations } from "../../adapters/sql/Migrator.ts"
import { embeddedSchemas } from "../../apps/server/EmbeddedSchemas.ts"

const schemaNames = embeddedSchemas.map(({ schema }) => schema)

/** Everything the migrations make, as text: tables, columns, constraints, indexes, functions, triggers, sequences. */
const catalog = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const relations = yield* sql`
    SELECT n.nspname AS schema, c.relname AS name, c.relkind::text AS kind, c.relpersistence::text AS persistence
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname IN ${sql.in(schemaNames)} ORDER BY 1, 2`
  const columns = yield* sql`
    SELECT table_schema, table_name, column_name, ordinal_position, data_type, udt_name, is_nullable,
      column_default, character_maximum_length, numeric_precision, is_identity, is_generated, generation_expression
    FROM information_schema.columns WHERE table_schema IN ${sql.in(schemaNames)} ORDER BY 1, 2, 4`
  const constraints = yield* sql`
    SELECT n.nspname AS schema, con.conrelid::regclass::text AS relation, con.conname AS name,
      con.contype::text AS kind, pg_get_constraintdef(con.oid) AS definition
    FROM pg_constraint con JOIN pg_namespace n ON n.oid = con.connamespace
    WHERE n.nspname IN ${sql.in(schemaNames)} ORDER BY 1, 2, 3`
  const indexes = yield* sql`
    SELECT schemaname, tablename, indexname, indexdef FROM pg_indexes
    WHERE schemaname IN ${sql.in(schemaNames)} ORDER BY 1, 2, 3`
  const functions = yield* sql`
    SELECT n.nspname AS schema, p.proname AS name, pg_get_functiondef(p.oid) AS definition
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname IN ${sql.in(schemaNames)} ORDER BY 1, 2, 3`
  const triggers = yield* sql`
    SELECT n.nspname AS schema, t.tgname AS name, pg_get_triggerdef(t.oid) AS definition
    FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE NOT t.tgisinternal AND n.nspname IN ${sql.in(schemaNames)} ORDER BY 1, 2`
  const applied: Record<string, unknown> = {}
  for (const schema of schemaNames) {
    applied[schema] = yield* sql`SELECT id, name FROM ${sql(schema)}.migrations ORDER BY id`
  }
  return { relations, columns, constraints, indexes, functions, triggers, applied }
})

/** Rows in every table of the schemas but their migration records. */
const rowsBesideMigrations = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const tables = yield* sql<{ schema: string; name: string }>`
    SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
    WHERE table_schema IN ${sql.in(schemaNames)} AND table_type = 'BASE TABLE' AND table_name <> 'migrations'`
  let rows = 0
  for (const table of tables) {
    const [count] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(table.schema)}.${sql(table.name)}`
    rows += count?.n ?? 0
  }
  return { tables: tables.length, rows }
})

/** Migrates every schema the server migrates, answering how many migrations each run applied. */
const migrateAll = Effect.forEach(embeddedSchemas, ({ schema, migrations }) =>
  runMigrations(schema, migrations).pipe(Effect.map((applied) => applied.length))
)

/** The embedded database under `dataDir` (copied from `image` when given and fitting), for `use`'s length. */
const onEmbedded = <A, E>(
  dataDir: string,
  image: EmbeddedImage | undefined,
  use: Effect.Effect<A, E, SqlClient.SqlClient>
) =>
  use.pipe(
    Effect.provide(Database.layerEmbedded({ dataDir, image })),
    Effect.provideService(References.MinimumLogLevel, "Warn")
  )

const withTemp = <A, E, R>(use: (dir: string) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => mkdtempSync(Path.join(tmpdir(), "hitl-image-"))),
    use,
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

const everyMigration = embeddedSchemas.map(({ migrations }) => migrations.length)

/** A copy of the image at `from` whose manifest says it was made for `schemas` instead. */
const relabelled = (from: string, to: string, schemas: EmbeddedImage["schemas"]) => {
  cpSync(from, to, { recursive: true })
  writeFileSync(Path.join(to, "image.json"), JSON.stringify(manifestOf(schemas)))
}

describe("the embedded database image (adapters/sql/EmbeddedImage.ts)", () => {
  // One image for every test: making one is a database created and migrated.
  const shared = mkdtempSync(Path.join(tmpdir(), "hitl-image-"))
  const imageDir = Path.join(shared, "image")
  beforeAll(
    () =>
      Effect.runPromise(
        buildEmbeddedImage({ target: imageDir, schemas: embeddedSchemas }).pipe(
          Effect.provideService(References.MinimumLogLevel, "Warn")
        )
      ),
    120_000
  )
  afterAll(() => rmSync(shared, { recursive: true, force: true }))

  it.effect(
    "a new database copied from the image is the database migrating step by step makes, with nothing else in it",
    () =>
      withTemp((dir) =>
        Effect.gen(function* () {
          // Its database files and what it was made for; no lock, no secrets file.
          assert.deepStrictEqual(readdirSync(imageDir).sort(), ["image.json", "pglite"])
          const image: EmbeddedImage = { dir: imageDir, schemas: embeddedSchemas }
          assert.isUndefined(imageMismatch(image))

          const fromImage = yield* onEmbedded(
            Path.join(dir, "from-image"),
            image,
            Effect.all({ applied: migrateAll, catalog, contents: rowsBesideMigrations })
          )
          const stepByStep = yield* onEmbedded(
            Path.join(dir, "step-by-step"),
            undefined,
            Effect.all({ applied: migrateAll, catalog })
          )
          // The migrations ran on both: on the copy they found everything applied.
          assert.deepStrictEqual(fromImage.applied, [0, 0, 0])
          assert.deepStrictEqual(stepByStep.applied, everyMigration)
          assert.deepStrictEqual(fromImage.catalog, stepByStep.catalog)
          assert.isAbove(fromImage.catalog.relations.length, 20)
          assert.isAbove(fromImage.contents.tables, 10)
          assert.strictEqual(fromImage.contents.rows, 0)
          // The copy is the data directory's own: the image is left as it was.
          assert.deepStrictEqual(readdirSync(imageDir).sort(), ["image.json", "pglite"])
          assert.isTrue(existsSync(Path.join(dir, "from-image", "pglite", "PG_VERSION")))
        })
      ),
    180_000
  )

  it.effect(
    "an image made for other migrations, or none, is not used: the database is created and migrated",
    () =>
      withTemp((dir) =>
        Effect.gen(function* () {
          const [hub, ...others] = embeddedSchemas
          const older = [{ ...hub!, migrations: hub!.migrations.slice(0, -1) }, ...others]
          const newer = [
            { ...hub!, migrations: [...hub!.migrations, { ...hub!.migrations[0]!, id: 999, name: "later" }] },
            ...others
          ]
          const renamed = [
            { ...hub!, migrations: hub!.migrations.map((m, i) => (i === 0 ? { ...m, name: "other" } : m)) },
            ...others
          ]
          const variants = { older, newer, renamed, fewerSchemas: others }
          for (const [name, schemas] of Object.entries(variants)) {
            relabelled(imageDir, Path.join(dir, name), schemas)
            assert.isDefined(imageMismatch({ dir: Path.join(dir, name), schemas: embeddedSchemas }), name)
          }
          // Missing, or a manifest without its database files.
          assert.isDefined(imageMismatch({ dir: Path.join(dir, "missing"), schemas: embeddedSchemas }))
          cpSync(Path.join(imageDir, "image.json"), Path.join(dir, "half", "image.json"), { recursive: true })
          assert.isDefined(imageMismatch({ dir: Path.join(dir, "half"), schemas: embeddedSchemas }))

          // Had the older image been copied, only hub's last migration would be applied now.
          const applied = yield* onEmbedded(
            Path.join(dir, "data"),
            { dir: Path.join(dir, "older"), schemas: embeddedSchemas },
            migrateAll
          )
          assert.deepStrictEqual(applied, everyMigration)
          // A database already there is opened as it is, whatever the image.
          const reopened = yield* onEmbedded(
            Path.join(dir, "data"),
            { dir: imageDir, schemas: embeddedSchemas },
            migrateAll
          )
          assert.deepStrictEqual(reopened, [0, 0, 0])
          assert.strictEqual(
            JSON.parse(readFileSync(Path.join(imageDir, "image.json"), "utf8")).schemas.length,
            embeddedSchemas.length
          )
        })
      ),
    240_000
  )
})
