import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { CallerKeyStore, type ApiKey, type StoredCallerKey } from "../../../core/decisions/CallerKeyStore.ts"

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
 * `revokedAt`. SQL failures and rows that do not decode are defects.
 */
export const CallerKeyStoreSql: Layer.Layer<CallerKeyStore, never, SqlClient.SqlClient> = Layer.effect(
  CallerKeyStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const all = sql`id, organization_id, name, key_prefix, hash, created_by, created_at, last_used_at, revoked_at`

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

    const activeRow = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: KeyRow,
      execute: (hash) => sql`SELECT ${all} FROM decisions.caller_keys WHERE hash = ${hash} AND revoked_at IS NULL`
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

    const touchRow = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.String, at: Schema.String }),
      execute: (input) => sql`
        UPDATE decisions.caller_keys SET last_used_at = ${input.at}::timestamptz WHERE id = ${input.id}`
    })

    const shown = Option.match({ onNone: () => undefined, onSome: toApiKey })

    return CallerKeyStore.of({
      create: Effect.fn("CallerKeyStoreSql.create")(function* (key: StoredCallerKey) {
        yield* insertRow(key)
      }, Effect.orDie),
      list: Effect.fn("CallerKeyStoreSql.list")(function* (organizationId: string) {
        return (yield* listRows(organizationId)).map(toApiKey)
      }, Effect.orDie),
      // Every caller request authenticates through here and `touch`: untraced.
      findActive: Effect.fnUntraced(function* (hash: string) {
        return Option.getOrUndefined(Option.map(yield* activeRow(hash), toStored))
      }, Effect.orDie),
      rotate: Effect.fn("CallerKeyStoreSql.rotate")(function* (
        organizationId: string,
        id: string,
        next: { readonly hash: string; readonly keyPrefix: string }
      ) {
        return shown(yield* rotateRow({ organizationId, id, hash: next.hash, keyPrefix: next.keyPrefix }))
      }, Effect.orDie),
      revoke: Effect.fn("CallerKeyStoreSql.revoke")(function* (organizationId: string, id: string, at: string) {
        return shown(yield* revokeRow({ organizationId, id, at }))
      }, Effect.orDie),
      touch: Effect.fnUntraced(function* (id: string, at: string) {
        yield* touchRow({ id, at })
      }, Effect.orDie)
    })
  })
)
