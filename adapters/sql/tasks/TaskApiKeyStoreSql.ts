import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { TaskApiKeyStore, type StoredTaskApiKey, type TaskApiKey } from "../../../core/tasks/ApiKeyStore.ts"
import { makeApiKeyTable } from "../ApiKeyTables.ts"
import { CredentialNoticesSql } from "../CredentialNotices.ts"

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
 * The TaskApiKeyStore port over `tasks.api_keys` (0003_api_keys.ts). SQL failures are defects. Lookups and
 * last uses as every API-key table keeps them (ApiKeyTables.ts).
 */
export const TaskApiKeyStoreSql: Layer.Layer<TaskApiKeyStore, never, SqlClient.SqlClient> = Layer.effect(
  TaskApiKeyStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const all = sql`id, user_id, name, key_prefix, hash, created_at, last_used_at, revoked_at`
    const keys = yield* makeApiKeyTable({ table: "tasks.api_keys", columns: all, Row: KeyRow, toStored })

    const listRows = SqlSchema.findAll({
      Request: Schema.String,
      Result: KeyRow,
      execute: (userId) =>
        sql`SELECT ${all} FROM tasks.api_keys WHERE user_id = ${userId} AND revoked_at IS NULL ORDER BY id DESC`
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
      findActive: keys.findActive,
      // The revocation and its notice commit together: no instance keeps the key past the commit.
      revoke: Effect.fn("TaskApiKeyStoreSql.revoke")(function* (userId: string, id: string, at: string) {
        return Option.isSome(yield* keys.change(id, revokeRow({ userId, id, at })))
      }, Effect.orDie),
      touch: keys.touch,
      flushUses: keys.flushUses
    })
  })
).pipe(Layer.provide(CredentialNoticesSql))
