import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/**
 * The `rate_limits` schema of RateLimiterStoreSql: the budgets every service's limits share when the server
 * runs on a Postgres server. Times are epoch milliseconds of the database's clock, so every instance counts
 * on the same clock. A row past `expires_at_ms` means the same as no row; the store removes such rows.
 *
 * The tables are unlogged: a budget lives a window long, so it is not worth a write-ahead log record and a
 * disk flush on every request. The price: after the database server crashes (or fails over to a replica)
 * every budget starts whole again, as if each client's window had just closed.
 */
export const rateLimitMigrations: ReadonlyArray<Migration> = [
  {
    id: 1,
    name: "windows_and_buckets",
    up: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      // `asked`: what the last request would have brought the count to, kept so a refusal (which leaves the
      // count alone) can still answer it in the same statement.
      yield* sql`CREATE TABLE rate_limits.windows (
        key text PRIMARY KEY,
        count double precision NOT NULL,
        asked double precision NOT NULL,
        expires_at_ms double precision NOT NULL
      )`
      yield* sql`CREATE INDEX windows_expires_at_ms ON rate_limits.windows (expires_at_ms)`
      yield* sql`CREATE TABLE rate_limits.buckets (
        key text PRIMARY KEY,
        tokens double precision NOT NULL,
        last_refill_ms double precision NOT NULL,
        expires_at_ms double precision NOT NULL
      )`
      yield* sql`CREATE INDEX buckets_expires_at_ms ON rate_limits.buckets (expires_at_ms)`
    })
  },
  {
    id: 2,
    name: "unlogged",
    up: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`ALTER TABLE rate_limits.windows SET UNLOGGED`
      yield* sql`ALTER TABLE rate_limits.buckets SET UNLOGGED`
    })
  }
]
