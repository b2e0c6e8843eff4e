import { assert, describe, it, layer } from "@effect/vitest"
import { Cause, Effect, Exit, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { existsSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { createServer, type Server, type Socket } from "node:net"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { Database } from "../../adapters/sql/Database.ts"
import { runMigrations, type Migration } from "../../adapters/sql/Migrator.ts"
import { Unavailable } from "../../core/kernel/Errors.ts"
import { sqlBackends } from "../support/Databases.ts"

const creatingTable = (id: number, schema: string, table: string): Migration => ({
  id,
  name: `create_${table}`,
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE ${sql(schema)}.${sql(table)} (id integer PRIMARY KEY)`
    // Runs once or fails: a second run of this migration would violate the primary key.
    yield* sql`INSERT INTO ${sql(schema)}.${sql(table)} (id) VALUES (1)`
  })
})

const failing = (id: number): Migration => ({
  id,
  name: "fails",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`SELECT no_such_function()`
  })
})

const appliedIn = (schema: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ id: number; name: string }>`SELECT id, name FROM ${sql(schema)}.migrations ORDER BY id`
  })

// The unnamed `layer` inside `describe` builds the database before the first test, so a backend that is down
// fails every test instead of skipping them.
for (const backend of sqlBackends) {
  describe(`Database (${backend.name})`, () =>
    layer(backend.layer, { excludeTestServices: true })((it) => {
      it.effect("answers its kind and a ping", () =>
        Effect.gen(function* () {
          const database = yield* Database
          assert.strictEqual(database.kind, backend.name === "pglite" ? "embedded" : "postgres")
          yield* database.ping
        })
      )

      it.effect("stores JSONB and timestamptz and round-trips them", () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* sql`CREATE TABLE docs (id text PRIMARY KEY, doc jsonb NOT NULL, at timestamptz NOT NULL)`
          const doc = { title: "Zoë ✓", tags: ["a", "b"], nested: { n: 1.5, none: null } }
          const at = new Date("2026-01-31T12:34:56.789Z")
          yield* sql`INSERT INTO docs (id, doc, at) VALUES ('d1', ${JSON.stringify(doc)}::jsonb, ${at})`
          const rows = yield* sql<{ doc: unknown; at: Date; title: string; late: boolean }>`
          SELECT doc, at, doc->>'title' AS title, at > '2026-01-31T12:00:00Z'::timestamptz AS late FROM docs`
          assert.deepStrictEqual(rows[0]?.doc, doc)
          assert.strictEqual(rows[0]?.title, "Zoë ✓")
          assert.strictEqual(rows[0]?.late, true)
          assert.instanceOf(rows[0]?.at, Date)
          assert.strictEqual(rows[0]?.at.toISOString(), at.toISOString())
        })
      )

      it.effect("INSERT ... ON CONFLICT inserts once, then updates or does nothing", () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* sql`CREATE TABLE counters (name text PRIMARY KEY, n integer NOT NULL)`
          const bump = sql<{ n: number }>`
          INSERT INTO counters (name, n) VALUES ('c', 1)
          ON CONFLICT (name) DO UPDATE SET n = counters.n + 1 RETURNING n`
          assert.deepStrictEqual(yield* bump, [{ n: 1 }])
          assert.deepStrictEqual(yield* bump, [{ n: 2 }])
          const nothing = yield* sql`INSERT INTO counters (name, n) VALUES ('c', 9) ON CONFLICT DO NOTHING RETURNING n`
          assert.strictEqual(nothing.length, 0)
        })
      )

      it.effect("keeps no compiled statement: a statement's text and parameters die with it", () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          // The compiler and its two caches, where the SQL client keeps them: if a later version moves them, this
          // fails, and `keepNoCompiledStatements` (which then changes nothing) needs another look.
          type Caches = { readonly statementCache: unknown; readonly statementCacheNoTransform: unknown }
          const compilerOf = (statement: unknown) => (statement as { readonly compiler: Caches }).compiler
          const compiler = compilerOf(sql.unsafe("SELECT 1"))
          assert.instanceOf(compiler.statementCache, WeakMap)
          assert.instanceOf(compiler.statementCacheNoTransform, WeakMap)
          const kept = (statement: object) =>
            [compiler.statementCache, compiler.statementCacheNoTransform].some(
              (cache) => (cache as WeakMap<object, unknown>).get(statement) !== undefined
            )

          const read = sql<{ n: number }>`SELECT ${7}::integer AS n`
          assert.deepStrictEqual(yield* read, [{ n: 7 }])
          assert.isFalse(kept(read))
          // Run again, it is compiled again, to the same text.
          assert.deepStrictEqual(yield* read, [{ n: 7 }])
          const untransformed = sql.withoutTransforms()<{ n: number }>`SELECT ${8}::integer AS n`
          assert.deepStrictEqual(yield* untransformed, [{ n: 8 }])
          assert.isFalse(kept(untransformed))
          assert.deepStrictEqual(read.compile(), read.compile())
          assert.isFalse(kept(read))
        })
      )

      it.effect("withTransaction commits on success and rolls back on failure", () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* sql`CREATE TABLE ledger (id integer PRIMARY KEY)`
          yield* sql.withTransaction(
            Effect.all([sql`INSERT INTO ledger VALUES (1)`, sql`INSERT INTO ledger VALUES (2)`])
          )
          const failed = yield* Effect.exit(
            sql.withTransaction(
              Effect.gen(function* () {
                yield* sql`INSERT INTO ledger VALUES (3)`
                return yield* Effect.fail("abandon")
              })
            )
          )
          assert.isTrue(Exit.isFailure(failed))
          const violated = yield* Effect.exit(
            sql.withTransaction(Effect.all([sql`INSERT INTO ledger VALUES (4)`, sql`INSERT INTO ledger VALUES (1)`]))
          )
          assert.isTrue(Exit.isFailure(violated))
          const rows = yield* sql<{ id: number }>`SELECT id FROM ledger ORDER BY id`
          assert.deepStrictEqual(
            rows.map((row) => row.id),
            [1, 2]
          )
        })
      )

      it.effect("runMigrations applies each migration once: a second run applies nothing", () =>
        Effect.gen(function* () {
          const migrations = [creatingTable(1, "once", "first"), creatingTable(2, "once", "second")]
          const first = yield* runMigrations("once", migrations)
          assert.deepStrictEqual(first, [
            { id: 1, name: "create_first" },
            { id: 2, name: "create_second" }
          ])
          assert.deepStrictEqual(yield* runMigrations("once", migrations), [])
          const third = yield* runMigrations("once", [...migrations, creatingTable(3, "once", "third")])
          assert.deepStrictEqual(third, [{ id: 3, name: "create_third" }])
          assert.deepStrictEqual(yield* appliedIn("once"), [
            { id: 1, name: "create_first" },
            { id: 2, name: "create_second" },
            { id: 3, name: "create_third" }
          ])
        })
      )

      it.effect("concurrent runMigrations of one schema all succeed and apply each migration once", () =>
        Effect.gen(function* () {
          const migrations = [1, 2, 3].map((id) => creatingTable(id, "racing", `t${id}`))
          const runs = yield* Effect.forEach([1, 2, 3, 4], () => runMigrations("racing", migrations), {
            concurrency: "unbounded"
          })
          assert.deepStrictEqual(
            runs
              .flat()
              .map((m) => m.id)
              .sort(),
            [1, 2, 3]
          )
          assert.strictEqual((yield* appliedIn("racing")).length, 3)
        })
      )

      it.effect("a failing migration keeps the ones before it and leaves no trace of itself", () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const exit = yield* Effect.exit(runMigrations("halting", [creatingTable(1, "halting", "kept"), failing(2)]))
          assert.isTrue(Exit.isFailure(exit))
          assert.deepStrictEqual(yield* appliedIn("halting"), [{ id: 1, name: "create_kept" }])
          const partial = creatingTable(2, "halting", "partial")
          const exit2 = yield* Effect.exit(
            runMigrations("halting", [
              creatingTable(1, "halting", "kept"),
              { ...partial, up: Effect.andThen(partial.up, failing(3).up) }
            ])
          )
          assert.isTrue(Exit.isFailure(exit2))
          const tables = yield* sql<{ n: number }>`
          SELECT count(*)::integer AS n FROM information_schema.tables WHERE table_schema = 'halting' AND table_name = 'partial'`
          assert.strictEqual(tables[0]?.n, 0)
        })
      )

      it.effect("refuses, as a defect, a database whose applied migration has another name", () =>
        Effect.gen(function* () {
          yield* runMigrations("renamed", [creatingTable(1, "renamed", "original")])
          const exit = yield* Effect.exit(runMigrations("renamed", [creatingTable(1, "renamed", "other")]))
          assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause))
          assert.include(
            String(Cause.squash((exit as Exit.Failure<unknown, unknown>).cause)),
            'applied as "create_original"'
          )
        })
      )
    }))
}

const withTempDir = <A, E, R>(use: (dir: string) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.promise(() => mkdtemp(Path.join(tmpdir(), "hitl-db-"))),
    use,
    (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )

describe("Database (embedded on disk)", () => {
  it.live(
    "keeps its data under <dataDir>/pglite across a close and a reopen",
    () =>
      withTempDir((dir) =>
        Effect.gen(function* () {
          const open = Database.layer({ dataDir: dir })
          yield* Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            assert.strictEqual((yield* Database).kind, "embedded")
            yield* sql`CREATE TABLE notes (id integer PRIMARY KEY, body text NOT NULL)`
            yield* sql`INSERT INTO notes VALUES (1, 'kept')`
          }).pipe(Effect.provide(open))
          assert.isTrue(existsSync(Path.join(dir, "pglite", "PG_VERSION")))
          const rows = yield* Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            return yield* sql<{ id: number; body: string }>`SELECT id, body FROM notes`
          }).pipe(Effect.provide(open))
          assert.deepStrictEqual(rows, [{ id: 1, body: "kept" }])
        })
      ),
    60_000
  )

  it.live(
    "serves a data directory whose path is too long for a socket address through a private temporary folder",
    () =>
      withTempDir((dir) =>
        Effect.gen(function* () {
          const deep = Path.join(dir, "a-folder-name-long-enough".repeat(5))
          assert.isAbove(Buffer.byteLength(Path.join(deep, "pglite.sock")), 108)
          const rows = yield* Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            return yield* sql<{ one: number }>`SELECT 1 AS one`
          }).pipe(Effect.provide(Database.layer({ dataDir: deep })))
          assert.deepStrictEqual(rows, [{ one: 1 }])
          assert.isFalse(existsSync(Path.join(deep, "pglite.sock")))
        })
      ),
    60_000
  )
})

/** A TCP server that accepts connections and never answers: a database that hangs. */
const silentServer = Effect.acquireRelease(
  Effect.callback<{ readonly server: Server; readonly port: number }>((resume) => {
    const sockets = new Set<Socket>()
    const server = createServer((socket) => void sockets.add(socket))
    server.on("close", () => sockets.forEach((socket) => socket.destroy()))
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      resume(Effect.succeed({ server, port: typeof address === "object" && address !== null ? address.port : 0 }))
    })
  }),
  ({ server }) =>
    Effect.callback<void>((resume) => {
      server.close(() => resume(Effect.void))
      server.emit("close")
    })
)

const timedPing = Effect.gen(function* () {
  const database = yield* Database
  const startedAt = Date.now()
  const error = yield* Effect.flip(database.ping)
  return { kind: database.kind, error, elapsedMs: Date.now() - startedAt }
})

describe("Database ping", () => {
  it.live("fails quickly with Unavailable when nothing listens at the server's address", () =>
    Effect.gen(function* () {
      const { kind, error, elapsedMs } = yield* timedPing.pipe(
        Effect.provide(
          Database.layer({ url: Redacted.make("postgres://postgres@127.0.0.1:1/x"), dataDir: "/nonexistent/never" })
        )
      )
      assert.strictEqual(kind, "postgres")
      assert.instanceOf(error, Unavailable)
      assert.isBelow(elapsedMs, 3_000)
    })
  )

  it.live("fails with Unavailable within its timeout when the server accepts but never answers", () =>
    Effect.gen(function* () {
      const { port } = yield* silentServer
      const { error, elapsedMs } = yield* timedPing.pipe(
        Effect.provide(
          Database.layerPostgres({
            url: Redacted.make(`postgres://postgres@127.0.0.1:${port}/x`),
            pingTimeout: "300 millis",
            connectTimeout: "10 seconds"
          })
        )
      )
      assert.instanceOf(error, Unavailable)
      assert.isAtLeast(elapsedMs, 250)
      assert.isBelow(elapsedMs, 3_000)
    })
  )
})
