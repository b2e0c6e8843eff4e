import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema, type Statement } from "effect/sql"
import { IdempotencyStore, type Claim } from "../../core/idempotency/IdempotencyStore.ts"
import { gatheredInShared } from "./units/GatheredReads.ts"
import { writeBehind } from "./units/HeldWrites.ts"
import { oneStatementGuards } from "./units/OneStatement.ts"

const Existing = Schema.Struct({
  fingerprint: Schema.String,
  status: Schema.Literals(["running", "done"]),
  response_status: Schema.NullOr(Schema.Number),
  response_content_type: Schema.NullOr(Schema.String),
  response_body: Schema.NullOr(Schema.String),
  expired: Schema.Boolean
})

const InsertedKey = Schema.Struct({ scope: Schema.String, key: Schema.String })

interface ClaimInput {
  readonly scope: string
  readonly key: string
  readonly fingerprint: string
  readonly nowMs: number
  readonly expiresAtMs: number
}

interface KeptRow {
  readonly status: number
  readonly contentType: string
  readonly body: string
}

/** The tag of a claim held as a guard of a unit run as one statement. */
class HeldClaim {
  constructor(readonly input: ClaimInput) {}
}

const claimed: Claim = { _tag: "Claimed" }
const mismatch: Claim = { _tag: "Mismatch" }
const Count = Schema.Struct({ count: Schema.Number })

const Key = Schema.Struct({ scope: Schema.String, key: Schema.String, nowMs: Schema.Number })

/**
 * The idempotency port over `<schema>.idempotency_keys` (adapters/sql/platform/0001_idempotency.ts), used
 * inside the mutation's transaction. `claim` is one `INSERT ... ON CONFLICT` statement: the row is inserted,
 * or an expired or never-completed row replaced, by exactly one of many concurrent claims. A claim that
 * meets a row another open transaction inserted waits on it (Postgres holds the unique key until that
 * transaction ends), then sees the committed row and replays it, or inserts if the other rolled back.
 * A committed `running` row can only be left by a server that wrote claims outside a transaction (before
 * units of work); it counts as absent. SQL failures are defects.
 */
export const IdempotencyStoreSql = (schema: string): Layer.Layer<IdempotencyStore, never, SqlClient.SqlClient> =>
  Layer.effect(
    IdempotencyStore,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const table = sql`${sql(schema)}.idempotency_keys`

      const findExisting = SqlSchema.findOneOption({
        Request: Key,
        Result: Existing,
        execute: (r) => sql`
          SELECT fingerprint, status, response_status, response_content_type, response_body,
            expires_at_ms < ${r.nowMs}::bigint AS expired
          FROM ${table} WHERE scope = ${r.scope} AND key = ${r.key}`
      })

      /**
       * Claims keys in one statement: one alone, or those of the units that share a transaction (their keys
       * differ: units with one key never share). Rows go in key order, so two such statements never wait for each
       * other crosswise. A key is claimed when its row comes back.
       */
      /**
       * The rows of `claims` inserted, or an expired or never-completed row replaced, in key order; running, or
       * done with its response when a unit that runs as one statement claims and completes in that statement.
       */
      const claimRows = (
        claims: ReadonlyArray<ClaimInput & { readonly response?: KeptRow | undefined }>
      ): Statement.Statement<{ readonly scope: string; readonly key: string }> => sql`
          INSERT INTO ${table} AS k (scope, key, fingerprint, status, response_status, response_content_type,
            response_body, created_at_ms, expires_at_ms)
          VALUES ${sql.csv(
            claims.map(
              (r) =>
                sql`(${r.scope}, ${r.key}, ${r.fingerprint}, ${r.response === undefined ? "running" : "done"},
                  ${r.response?.status ?? null}::integer, ${r.response?.contentType ?? null}::text,
                  ${r.response?.body ?? null}::text, ${r.nowMs}::bigint, ${r.expiresAtMs}::bigint)`
            )
          )}
          ON CONFLICT (scope, key) DO UPDATE SET
            fingerprint = excluded.fingerprint,
            status = excluded.status,
            response_status = excluded.response_status,
            response_content_type = excluded.response_content_type,
            response_body = excluded.response_body,
            created_at_ms = excluded.created_at_ms,
            expires_at_ms = excluded.expires_at_ms
          WHERE k.expires_at_ms < excluded.created_at_ms OR k.status = 'running'
          RETURNING k.scope, k.key`

      const tryClaimAll = SqlSchema.findAll({
        Request: Schema.Array(
          Schema.Struct({
            scope: Schema.String,
            key: Schema.String,
            fingerprint: Schema.String,
            nowMs: Schema.Number,
            expiresAtMs: Schema.Number
          })
        ),
        Result: InsertedKey,
        execute: claimRows
      })

      const byKey = (a: ClaimInput, b: ClaimInput) =>
        a.scope < b.scope ? -1 : a.scope > b.scope ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0

      /** Whether each claim took its key. */
      const tryClaims = (claims: ReadonlyArray<ClaimInput>) =>
        Effect.map(tryClaimAll([...claims].sort(byKey)), (rows) => {
          const won = new Set(rows.map((row) => `${row.scope}\n${row.key}`))
          return claims.map((c) => won.has(`${c.scope}\n${c.key}`))
        })

      /** Alone one statement; in a shared transaction one for all its units' claims. */
      const firstClaim = gatheredInShared(sql, tryClaims)

      // Every mutation with a key runs claim and complete: untraced (their statements have spans of their own).
      const claim = Effect.fnUntraced(function* (input: ClaimInput) {
        // In a unit run as one statement the claim is a guard of that statement: taken, or the statement fails.
        const guards = yield* oneStatementGuards(sql)
        if (guards !== undefined) {
          guards.push({ tag: new HeldClaim(input), write: claimRows([input]) })
          return claimed
        }
        // Between the insert that lost and the read, the row may expire or be purged: then claim again.
        for (let attempt = 0; ; attempt++) {
          if (attempt === 0 ? yield* firstClaim(input) : (yield* tryClaims([input]))[0]) return claimed
          const existing = yield* findExisting(input)
          if (existing._tag === "None" || existing.value.expired || existing.value.status === "running") continue
          const row = existing.value
          if (row.fingerprint !== input.fingerprint) return mismatch
          if (row.response_status === null || row.response_content_type === null || row.response_body === null) {
            return yield* Effect.die(new Error("an idempotency record is done without a response"))
          }
          const replay: Claim = {
            _tag: "Replay",
            response: { status: row.response_status, contentType: row.response_content_type, body: row.response_body }
          }
          return replay
        }
      }, Effect.orDie)

      const complete = Effect.fnUntraced(function* (input: {
        readonly scope: string
        readonly key: string
        readonly response: { readonly status: number; readonly contentType: string; readonly body: string }
        readonly expiresAtMs: number
      }) {
        const { scope, key, response } = input
        // Run as one statement: the claim itself goes done, with the response (both are parts of that statement).
        const guard = (yield* oneStatementGuards(sql))?.find(
          (g) => g.tag instanceof HeldClaim && g.tag.input.scope === scope && g.tag.input.key === key
        )
        if (guard !== undefined && guard.tag instanceof HeldClaim) {
          guard.write = claimRows([{ ...guard.tag.input, response, expiresAtMs: input.expiresAtMs }])
          return
        }
        // The unit's last write: it goes with the unit's last statement (nothing in the unit reads it back).
        yield* writeBehind(
          sql,
          sql`
          UPDATE ${table} SET
            status = 'done',
            response_status = ${response.status},
            response_content_type = ${response.contentType},
            response_body = ${response.body},
            expires_at_ms = ${input.expiresAtMs}
          WHERE scope = ${scope} AND key = ${key} AND status = 'running'`
        )
      }, Effect.orDie)

      const release = Effect.fn("IdempotencyStoreSql.release")(function* (input: {
        readonly scope: string
        readonly key: string
      }) {
        yield* sql`DELETE FROM ${table} WHERE scope = ${input.scope} AND key = ${input.key} AND status = 'running'`
      }, Effect.orDie)

      const purge = SqlSchema.findOne({
        Request: Schema.Number,
        Result: Count,
        execute: (nowMs) => sql`
          WITH purged AS (DELETE FROM ${table} WHERE expires_at_ms < ${nowMs}::bigint RETURNING 1)
          SELECT count(*)::integer AS count FROM purged`
      })

      const purgeExpired = Effect.fn("IdempotencyStoreSql.purgeExpired")(function* (nowMs: number) {
        const { count } = yield* purge(nowMs)
        return count
      }, Effect.orDie)

      return IdempotencyStore.of({ claim, complete, release, purgeExpired })
    })
  )
