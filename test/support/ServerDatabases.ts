import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"

/** Runs `program` against the database at `url` on a client of its own, closed when it ends. */
export const onPostgres = <A>(
  url: string,
  program: Effect.Effect<A, unknown, PgClient.PgClient | SqlClient.SqlClient>
): Promise<A> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(PgClient.make({ url: Redacted.make(url), maxConnections: 2 }), (client) =>
        program.pipe(
          Effect.provideService(PgClient.PgClient, client),
          Effect.provideService(SqlClient.SqlClient, client)
        )
      )
    ).pipe(Effect.provide(Reactivity.layer)) as Effect.Effect<A>
  )

/**
 * A database of its own on the Postgres server at `serverUrl`, for a bundled server under test: its URL, and
 * `drop` (forcing out its connections) to run once the server has stopped.
 */
export const freshPostgres = async (serverUrl: string, prefix: string) => {
  const name = `hitl_${prefix}_${randomBytes(5).toString("hex")}`
  const admin = (statement: (sql: PgClient.PgClient) => Effect.Effect<unknown, unknown>) =>
    onPostgres(serverUrl, Effect.flatMap(Effect.service(PgClient.PgClient), statement))
  await admin((sql) => sql`CREATE DATABASE ${sql(name)}`)
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: () => admin((sql) => sql`DROP DATABASE IF EXISTS ${sql(name)} WITH (FORCE)`).then(() => undefined)
  }
}

/** The databases a bundled server is tested on: the embedded one, and a Postgres server when DATABASE_URL names one. */
export const serverDatabases = [
  { name: "embedded database", url: undefined as string | undefined },
  ...(process.env["DATABASE_URL"] ? [{ name: "Postgres server", url: process.env["DATABASE_URL"] }] : [])
]
