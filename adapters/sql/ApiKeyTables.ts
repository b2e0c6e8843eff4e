import { Effect, Option, Schema } from "effect"
import { SqlClient, SqlSchema, type Statement } from "effect/sql"
import { makeCredentialCache } from "./CredentialCache.ts"
import { makeLastUses, type LastUse } from "./LastUses.ts"

export interface ApiKeyTableOptions<Row, Stored> {
  /** The table, schema-qualified (`tasks.api_keys`); also the scope of its credential cache. */
  readonly table: string
  /** The columns `Row` reads. */
  readonly columns: Statement.Fragment
  readonly Row: Schema.Codec<Row, unknown>
  readonly toStored: (row: Row) => Stored
}

/**
 * What the API-key tables (`decisions.caller_keys`, `tasks.api_keys`) share: a key is found by its hash
 * while `revoked_at` is null, and has an `id` and a `last_used_at`.
 *
 * The request path reads and writes nothing in the common case: `findActive` answers from a per-instance
 * cache (CredentialCache.ts) that every change of a key empties for that key on every instance when it
 * commits (`change`), and `touch` only notes the use (LastUses.ts: one batched write per flush).
 */
export const makeApiKeyTable = <Row, Stored extends { readonly id: string }>(
  options: ApiKeyTableOptions<Row, Stored>
) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const table = sql.unsafe(options.table)
    const cache = yield* makeCredentialCache<Stored>({ scope: options.table, idOf: (key) => key.id })
    const uses = yield* makeLastUses((batch: ReadonlyArray<LastUse>) =>
      Effect.orDie(sql`
        UPDATE ${table} AS k SET last_used_at = u.at
        FROM jsonb_to_recordset(${JSON.stringify(batch)}::jsonb) AS u(id text, at timestamptz)
        WHERE k.id = u.id AND (k.last_used_at IS NULL OR k.last_used_at < u.at)`)
    )
    const activeRow = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: options.Row,
      execute: (hash) => sql`SELECT ${options.columns} FROM ${table} WHERE hash = ${hash} AND revoked_at IS NULL`
    })
    return {
      // Every request with a key authenticates through here and `touch`: untraced.
      findActive: (hash: string) =>
        cache.get(
          hash,
          Effect.orDie(Effect.map(activeRow(hash), (row) => Option.getOrUndefined(Option.map(row, options.toStored))))
        ),
      /** A write to key `id` (its row when it changed one) and its notice, committed together. */
      change: <A, E, R>(id: string, write: Effect.Effect<Option.Option<A>, E, R>) =>
        sql.withTransaction(Effect.tap(write, (row) => (Option.isSome(row) ? cache.changed(id) : Effect.void))),
      touch: uses.note,
      flushUses: uses.flush
    }
  })
