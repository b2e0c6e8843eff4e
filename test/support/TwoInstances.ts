import { Context, Effect, Layer, PubSub, Redacted } from "effect"
import { SqlClient, Statement } from "effect/sql"
import type { CredentialNotice, CredentialNotices } from "../../adapters/sql/CredentialNotices.ts"
import { Database, type DatabaseServices } from "../../adapters/sql/Database.ts"
import type { SqlBackend } from "./Databases.ts"

/**
 * A fresh migrated database with two ways in, as two server instances have: the same client on PGlite (one
 * process, one connection), a second pool of its own on a Postgres server.
 */
export const twoWaysIn = (backend: SqlBackend, migrations: Layer.Layer<never, unknown, SqlClient.SqlClient>) =>
  Effect.gen(function* () {
    const first = yield* Layer.build(backend.layer)
    yield* Layer.build(migrations).pipe(Effect.provideContext(first))
    const sql = Context.get(first, SqlClient.SqlClient)
    if (backend.name !== "postgres") return { first, second: first, sql }
    const [row] = yield* sql<{ readonly name: string }>`SELECT current_database() AS name`
    const url = new URL(process.env["DATABASE_URL"]!)
    url.pathname = `/${row!.name}`
    const second: Context.Context<DatabaseServices> = yield* Layer.build(
      Database.layerPostgres({ url: Redacted.make(url.toString()), maxConnections: 4 })
    )
    return { first, second, sql }
  })

/** One instance: its own build of `layer` (fresh: it shares nothing with another instance but the database). */
export const instanceOn = <A, E>(
  layer: Layer.Layer<A, E, DatabaseServices>,
  database: Context.Context<DatabaseServices>
) => Layer.build(Layer.fresh(layer)).pipe(Effect.provideContext(database))

/** The statements an effect runs on this fiber, as SQL text. */
export const statementsOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const seen: Array<string> = []
    const result = yield* effect.pipe(
      Effect.provideService(Statement.CurrentTransformer, (statement) => {
        seen.push(statement.compile()[0])
        return Effect.succeed(statement)
      })
    )
    return [result, seen] as const
  })

/**
 * Subscribes to an instance's notices now, and answers the wait for `expected`: a change made afterwards
 * cannot be missed. In process (PGlite) the notice is delivered before the change's unit of work returns, so
 * there is nothing to wait for; on a Postgres server the wait ends when the listener has acted on it.
 */
export const acknowledgement = (
  notices: CredentialNotices["Service"],
  backend: SqlBackend,
  expected: CredentialNotice
) =>
  Effect.gen(function* () {
    const heard = yield* PubSub.subscribe(notices.heard)
    return Effect.gen(function* () {
      if (backend.name !== "postgres") return
      while (true) {
        const notice = yield* PubSub.take(heard)
        if (notice.scope === expected.scope && notice.id === expected.id) return
      }
    })
  })
