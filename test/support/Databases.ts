import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import type { SqlError } from "effect/sql"
import { randomBytes } from "node:crypto"
import { Database, type DatabaseServices } from "../../adapters/sql/Database.ts"
import { SqlGroupCommit } from "../../adapters/sql/TransactionsSql.ts"
import { freshDatabaseDump } from "./FreshPglite.ts"

/** A SQL backend a contract suite runs against; `name` goes into test titles. */
export interface SqlBackend {
  readonly name: "pglite" | "postgres" | "pglite, grouping off"
  /** A fresh, empty database each time the layer is built; gone when it is released. */
  readonly layer: Layer.Layer<DatabaseServices, SqlError.SqlError>
}

/**
 * A new embedded PGlite in memory, started from the dump of a new database when the global setup made one
 * (FreshPglite.ts): the same database, without creating it again for every suite.
 */
const memoryDatabase = Layer.unwrap(Effect.sync(() => Database.layerMemory({ from: freshDatabaseDump() })))

/** Embedded PGlite in memory: always available. */
export const pglite: SqlBackend = { name: "pglite", layer: memoryDatabase }

/**
 * Embedded PGlite with group commit turned off (as `SQL_GROUP_COMMIT=false` does): every `TransactionsSql` built
 * over it runs each shared unit as a transaction of its own.
 */
export const pgliteUngrouped: SqlBackend = {
  name: "pglite, grouping off",
  layer: Layer.merge(memoryDatabase, Layer.succeed(SqlGroupCommit, false))
}

/**
 * A database of its own on the `DATABASE_URL` server: created when the layer is built, dropped (`WITH (FORCE)`)
 * when it is released, so test files can run in parallel on one server.
 */
export const postgresAt = (serverUrl: string): SqlBackend => ({
  name: "postgres",
  layer: Layer.unwrap(
    Effect.gen(function* () {
      const admin = yield* PgClient.make({
        url: Redacted.make(serverUrl),
        maxConnections: 1,
        connectTimeout: "5 seconds"
      })
      const name = `hitl_test_${randomBytes(6).toString("hex")}`
      yield* Effect.acquireRelease(admin`CREATE DATABASE ${admin(name)}`, () =>
        admin`DROP DATABASE IF EXISTS ${admin(name)} WITH (FORCE)`.pipe(Effect.ignore({ log: "Warn" }))
      )
      const url = new URL(serverUrl)
      url.pathname = `/${name}`
      return Database.layerPostgres({ url: Redacted.make(url.toString()), maxConnections: 10 })
    })
  ).pipe(Layer.provide(Reactivity.layer))
})

const ci = process.env["CI"] === "true"
const databaseUrl = process.env["DATABASE_URL"]

/**
 * Under CI a Postgres server is required: with `DATABASE_URL` unset the Postgres backend is still listed and
 * its layer fails, so its suites fail rather than disappear. Outside CI it is listed only when configured.
 */
const postgres: ReadonlyArray<SqlBackend> =
  databaseUrl !== undefined && databaseUrl !== ""
    ? [postgresAt(databaseUrl)]
    : ci
      ? [
          {
            name: "postgres",
            layer: Layer.effectContext(
              Effect.die(new Error("CI=true requires DATABASE_URL (a Postgres server to test against)"))
            )
          }
        ]
      : []

/** The SQL backends every SQL contract suite runs against. */
export const sqlBackends: ReadonlyArray<SqlBackend> = [pglite, ...postgres]

/**
 * The SQL backends of the suites of units of work and of the stores that take part in them, which run both ways:
 * every SQL backend with group commit, and PGlite again without (the other path of the same code, not another
 * database: once is enough).
 */
export const sqlBackendsBothWays: ReadonlyArray<SqlBackend> = [pglite, pgliteUngrouped, ...postgres]
