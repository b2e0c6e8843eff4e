import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { CallerKeyStore, type ApiKey, type StoredCallerKey } from "../../../core/decisions/CallerKeyStore.ts"
import { makeCredentialCache } from "../CredentialCache.ts"
import { CredentialNoticesSql } from "../CredentialNotices.ts"
import { makeLastUses, type LastUse } from "../LastUses.ts"

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
 *
 * The request path reads and writes nothing in the common case: `findActive` answers from a per-instance
 * cache (CredentialCache.ts) that every rotation and revocation empties for that key on every instance when
 * it commits, and `touch` only notes the use (LastUses.ts: one batched write per flush).
 */
export const CallerKeyStoreSql: Layer.Layer<CallerKeyStore, never, SqlClient.SqlClient> = Layer.effect(
  CallerKeyStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const cache = yield* makeCredentialCache<StoredCallerKey>({ scope: "decisions.caller_keys", idOf: (key) => key.id })
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

    const uses = yield* makeLastUses((batch: ReadonlyArray<LastUse>) =>
      Effect.orDie(sql`
        UPDATE decisions.caller_keys AS k SET last_used_at = u.at
        FROM jsonb_to_recordset(${JSON.stringify(batch)}::jsonb) AS u(id text, at timestamptz)
        WHERE k.id = u.id AND (k.last_used_at IS NULL OR k.last_used_at < u.at)`)
    )

    const shown = Option.match({ onNone: () => undefined, onSome: toApiKey })

    return CallerKeyStore.of({
      create: Effect.fn("CallerKeyStoreSql.create")(function* (key: StoredCallerKey) {
        yield* insertRow(key)
      }, Effect.orDie),
      list: Effect.fn("CallerKeyStoreSql.list")(function* (organizationId: string) {
        return (yield* listRows(organizationId)).map(toApiKey)
      }, Effect.orDie),
      // Every caller request authenticates through here and `touch`: untraced.
      findActive: (hash: string) =>
        cache.get(
          hash,
          Effect.orDie(Effect.map(activeRow(hash), (row) => Option.getOrUndefined(Option.map(row, toStored))))
        ),
      // The change and its notice commit together: no instance keeps the old key past the commit.
      rotate: Effect.fn("CallerKeyStoreSql.rotate")(function* (
        organizationId: string,
        id: string,
        next: { readonly hash: string; readonly keyPrefix: string }
      ) {
        return yield* sql.withTransaction(
          Effect.gen(function* () {
            const row = yield* rotateRow({ organizationId, id, hash: next.hash, keyPrefix: next.keyPrefix })
            if (Option.isSome(row)) yield* cache.changed(id)
            return shown(row)
          })
        )
      }, Effect.orDie),
      revoke: Effect.fn("CallerKeyStoreSql.revoke")(function* (organizationId: string, id: string, at: string) {
        return yield* sql.withTransaction(
          Effect.gen(function* () {
            const row = yield* revokeRow({ organizationId, id, at })
            if (Option.isSome(row)) yield* cache.changed(id)
            return shown(row)
          })
        )
      }, Effect.orDie),
      touch: uses.note,
      flushUses: uses.flush
    })
  })
).pipe(Layer.provide(CredentialNoticesSql))
