import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { CallerKeyStore, type ApiKey, type StoredCallerKey } from "../../../core/decisions/CallerKeyStore.ts"
import { makeApiKeyTable } from "../ApiKeyTables.ts"
import { CredentialNoticesSql } from "../CredentialNotices.ts"

const KeyRow = Schema.Struct({
  id: Schema.String,
  organization_id: Schema.String,
  name: Schema.String,
  key_prefix: Schema.String,
  hash: Schema.String,
  created_by: Schema.String,
  created_at: Schema.Date,
  last_used_at: Schema.NullOr(Schema.Date),
  revoked_at: Schema.NullOr(Schema.Date)
})
type KeyRow = typeof KeyRow.Type

const toStored = (row: KeyRow): StoredCallerKey => ({
  id: row.id,
  organizationId: row.organization_id,
  name: row.name,
  keyPrefix: row.key_prefix,
  hash: row.hash,
  createdBy: row.created_by,
  createdAt: row.created_at.toISOString(),
  ...(row.last_used_at === null ? {} : { lastUsedAt: row.last_used_at.toISOString() }),
  ...(row.revoked_at === null ? {} : { revokedAt: row.revoked_at.toISOString() })
})

/** What a list shows: never the organization or the hash. */
const toApiKey = (row: KeyRow): ApiKey => {
  const { organizationId: _org, hash: _hash, ...key } = toStored(row)
  return key
}

const KeyOf = Schema.Struct({ organizationId: Schema.String, id: Schema.String })

/**
 * The CallerKeyStore port over `decisions.caller_keys` (0004_caller_keys.ts). Rotation and revocation are
 * single conditional UPDATEs: a revoked key cannot be rotated, and revoking again keeps the first
 * `revokedAt`. SQL failures and rows that do not decode are defects. Lookups and last uses as every API-key
 * table keeps them (ApiKeyTables.ts).
 */
export const CallerKeyStoreSql: Layer.Layer<CallerKeyStore, never, SqlClient.SqlClient> = Layer.effect(
  CallerKeyStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const all = sql`id, organization_id, name, key_prefix, hash, created_by, created_at, last_used_at, revoked_at`
    const keys = yield* makeApiKeyTable({ table: "decisions.caller_keys", columns: all, Row: KeyRow, toStored })

    const insertRow = SqlSchema.void({
      Request: Schema.Struct({
        id: Schema.String,
        organizationId: Schema.String,
        name: Schema.String,
        keyPrefix: Schema.String,
        hash: Schema.String,
        createdBy: Schema.String,
        createdAt: Schema.String,
        lastUsedAt: Schema.optional(Schema.String),
        revokedAt: Schema.optional(Schema.String)
      }),
      execute: (key) => sql`
        INSERT INTO decisions.caller_keys (${all})
        VALUES (${key.id}, ${key.organizationId}, ${key.name}, ${key.keyPrefix}, ${key.hash}, ${key.createdBy},
          ${key.createdAt}::timestamptz, ${key.lastUsedAt ?? null}::timestamptz, ${key.revokedAt ?? null}::timestamptz)`
    })

    const listRows = SqlSchema.findAll({
      Request: Schema.String,
      Result: KeyRow,
      execute: (organizationId) => sql`
        SELECT ${all} FROM decisions.caller_keys WHERE organization_id = ${organizationId} ORDER BY id DESC`
    })

    const rotateRow = SqlSchema.findOneOption({
      Request: Schema.Struct({ ...KeyOf.fields, hash: Schema.String, keyPrefix: Schema.String }),
      Result: KeyRow,
      execute: (input) => sql`
        UPDATE decisions.caller_keys SET hash = ${input.hash}, key_prefix = ${input.keyPrefix}
        WHERE organization_id = ${input.organizationId} AND id = ${input.id} AND revoked_at IS NULL
        RETURNING ${all}`
    })

    const revokeRow = SqlSchema.findOneOption({
      Request: Schema.Struct({ ...KeyOf.fields, at: Schema.String }),
      Result: KeyRow,
      execute: (input) => sql`
        UPDATE decisions.caller_keys SET revoked_at = coalesce(revoked_at, ${input.at}::timestamptz)
        WHERE organization_id = ${input.organizationId} AND id = ${input.id}
        RETURNING ${all}`
    })

    const shown = Option.match({ onNone: () => undefined, onSome: toApiKey })

    return CallerKeyStore.of({
      create: Effect.fn("CallerKeyStoreSql.create")(function* (key: StoredCallerKey) {
        yield* insertRow(key)
      }, Effect.orDie),
      list: Effect.fn("CallerKeyStoreSql.list")(function* (organizationId: string) {
        return (yield* listRows(organizationId)).map(toApiKey)
      }, Effect.orDie),
      findActive: keys.findActive,
      // The change and its notice commit together: no instance keeps the old key past the commit.
      rotate: Effect.fn("CallerKeyStoreSql.rotate")(function* (
        organizationId: string,
        id: string,
        next: { readonly hash: string; readonly keyPrefix: string }
      ) {
        return shown(
          yield* keys.change(id, rotateRow({ organizationId, id, hash: next.hash, keyPrefix: next.keyPrefix }))
        )
      }, Effect.orDie),
      revoke: Effect.fn("CallerKeyStoreSql.revoke")(function* (organizationId: string, id: string, at: string) {
        return shown(yield* keys.change(id, revokeRow({ organizationId, id, at })))
      }, Effect.orDie),
      touch: keys.touch,
      flushUses: keys.flushUses
    })
  })
).pipe(Layer.provide(CredentialNoticesSql))
