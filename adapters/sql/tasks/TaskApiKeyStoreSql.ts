import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { TaskApiKeyStore, type StoredTaskApiKey, type TaskApiKey } from "../../../core/tasks/ApiKeyStore.ts"
import { makeCredentialCache } from "../CredentialCache.ts"
import { CredentialNoticesSql } from "../CredentialNotices.ts"
import { makeLastUses, type LastUse } from "../LastUses.ts"

const KeyRow = Schema.Struct({
  id: Schema.String,
  user_id: Schema.String,
  name: Schema.String,
  key_prefix: Schema.String,
  hash: Schema.String,
  created_at: Schema.Date,
  last_used_at: Schema.NullOr(Schema.Date),
  revoked_at: Schema.NullOr(Schema.Date)
})
type KeyRow = typeof KeyRow.Type

const toStored = (row: KeyRow): StoredTaskApiKey => ({
  id: row.id,
  userId: row.user_id,
  name: row.name,
  keyPrefix: row.key_prefix,
  hash: row.hash,
  createdAt: row.created_at.toISOString(),
  lastUsedAt: row.last_used_at === null ? null : row.last_used_at.toISOString(),
  revokedAt: row.revoked_at === null ? null : row.revoked_at.toISOString()
})

const toApiKey = (row: KeyRow): TaskApiKey => {
  const { userId: _user, hash: _hash, revokedAt: _revoked, ...key } = toStored(row)
  return key
}

/**
 * The TaskApiKeyStore port over `tasks.api_keys` (0003_api_keys.ts). SQL failures are defects.
 *
 * The request path reads and writes nothing in the common case: `findActive` answers from a per-instance
 * cache (CredentialCache.ts) that every revocation empties for that key on every instance when it commits,
 * and `touch` only notes the use (LastUses.ts: one batched write per flush).
 */
export const TaskApiKeyStoreSql: Layer.Layer<TaskApiKeyStore, never, SqlClient.SqlClient> = Layer.effect(
  TaskApiKeyStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const cache = yield* makeCredentialCache<StoredTaskApiKey>({ scope: "tasks.api_keys", idOf: (key) => key.id })
    const uses = yield* makeLastUses((batch: ReadonlyArray<LastUse>) =>
      Effect.orDie(sql`
        UPDATE tasks.api_keys AS k SET last_used_at = u.at
        FROM jsonb_to_recordset(${JSON.stringify(batch)}::jsonb) AS u(id text, at timestamptz)
        WHERE k.id = u.id AND (k.last_used_at IS NULL OR k.last_used_at < u.at)`)
    )
    const all = sql`id, user_id, name, key_prefix, hash, created_at, last_used_at, revoked_at`

    const listRows = SqlSchema.findAll({
      Request: Schema.String,
      Result: KeyRow,
      execute: (userId) =>
        sql`SELECT ${all} FROM tasks.api_keys WHERE user_id = ${userId} AND revoked_at IS NULL ORDER BY id DESC`
    })
    const activeRow = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: KeyRow,
      execute: (hash) => sql`SELECT ${all} FROM tasks.api_keys WHERE hash = ${hash} AND revoked_at IS NULL`
    })
    const revokeRow = SqlSchema.findOneOption({
      Request: Schema.Struct({ userId: Schema.String, id: Schema.String, at: Schema.String }),
      Result: KeyRow,
      execute: (r) => sql`
        UPDATE tasks.api_keys SET revoked_at = ${r.at}::timestamptz
        WHERE user_id = ${r.userId} AND id = ${r.id} AND revoked_at IS NULL
        RETURNING ${all}`
    })

    return TaskApiKeyStore.of({
      create: Effect.fn("TaskApiKeyStoreSql.create")(function* (key: StoredTaskApiKey) {
        yield* sql`
          INSERT INTO tasks.api_keys (${all})
          VALUES (${key.id}, ${key.userId}, ${key.name}, ${key.keyPrefix}, ${key.hash}, ${key.createdAt}::timestamptz,
            ${key.lastUsedAt}::timestamptz, ${key.revokedAt}::timestamptz)`
      }, Effect.orDie),
      list: Effect.fn("TaskApiKeyStoreSql.list")(function* (userId: string) {
        return (yield* listRows(userId)).map(toApiKey)
      }, Effect.orDie),
      findActive: (hash: string) =>
        cache.get(
          hash,
          Effect.orDie(Effect.map(activeRow(hash), (row) => Option.getOrUndefined(Option.map(row, toStored))))
        ),
      // The revocation and its notice commit together: no instance keeps the key past the commit.
      revoke: Effect.fn("TaskApiKeyStoreSql.revoke")(function* (userId: string, id: string, at: string) {
        return yield* sql.withTransaction(
          Effect.gen(function* () {
            const revoked = Option.isSome(yield* revokeRow({ userId, id, at }))
            if (revoked) yield* cache.changed(id)
            return revoked
          })
        )
      }, Effect.orDie),
      touch: uses.note,
      flushUses: uses.flush
    })
  })
).pipe(Layer.provide(CredentialNoticesSql))
