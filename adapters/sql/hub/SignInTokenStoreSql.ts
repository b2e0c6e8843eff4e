import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import {
  ExternalViewerStore,
  SignInPurposes,
  SignInTokenStore,
  type SignInPurpose,
  type SignInToken
} from "../../../core/hub/SignInTokenStore.ts"

const TokenRow = Schema.Struct({
  token_hash: Schema.String,
  user_id: Schema.String,
  purpose: Schema.Literals(SignInPurposes),
  next: Schema.NullOr(Schema.String),
  created_at: Schema.Date,
  expires_at: Schema.Date,
  browser_hash: Schema.NullOr(Schema.String)
})

const toToken = (row: typeof TokenRow.Type): SignInToken => ({
  tokenHash: row.token_hash,
  userId: row.user_id,
  purpose: row.purpose,
  next: row.next,
  createdAt: row.created_at.toISOString(),
  expiresAt: row.expires_at.toISOString(),
  browserHash: row.browser_hash
})

/**
 * The SignInTokenStore port over `hub.sign_in_tokens` (0006_sign_in.ts). Redeeming is one conditional
 * UPDATE, so of two requests carrying the same link exactly one signs in. SQL failures are defects.
 */
export const SignInTokenStoreSql: Layer.Layer<SignInTokenStore, never, SqlClient.SqlClient> = Layer.effect(
  SignInTokenStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const redeemRow = SqlSchema.findOneOption({
      Request: Schema.Struct({ tokenHash: Schema.String, now: Schema.String }),
      Result: TokenRow,
      execute: ({ tokenHash, now }) => sql`
        UPDATE hub.sign_in_tokens SET used_at = ${now}::timestamptz
        WHERE token_hash = ${tokenHash} AND used_at IS NULL AND expires_at > ${now}::timestamptz
        RETURNING token_hash, user_id, purpose, next, created_at, expires_at, browser_hash`
    })
    const findRow = SqlSchema.findOneOption({
      Request: Schema.Struct({ tokenHash: Schema.String, now: Schema.String }),
      Result: TokenRow,
      execute: ({ tokenHash, now }) => sql`
        SELECT token_hash, user_id, purpose, next, created_at, expires_at, browser_hash FROM hub.sign_in_tokens
        WHERE token_hash = ${tokenHash} AND used_at IS NULL AND expires_at > ${now}::timestamptz`
    })
    return SignInTokenStore.of({
      insert: (t) =>
        sql`INSERT INTO hub.sign_in_tokens (token_hash, user_id, purpose, next, created_at, expires_at, browser_hash)
          VALUES (${t.tokenHash}, ${t.userId}, ${t.purpose}, ${t.next}, ${t.createdAt}::timestamptz,
            ${t.expiresAt}::timestamptz, ${t.browserHash})`.pipe(Effect.asVoid, Effect.orDie),
      find: (tokenHash, now) =>
        findRow({ tokenHash, now }).pipe(
          Effect.map((row) => (row._tag === "Some" ? toToken(row.value) : undefined)),
          Effect.orDie
        ),
      // The lock is taken by a statement of its own: the count's statement then sees what a unit that held it
      // before committed (each statement reads the database as of its start).
      countIssuedSince: Effect.fn("SignInTokenStoreSql.countIssuedSince")(function* (
        userId: string,
        purpose: SignInPurpose,
        since: string
      ) {
        yield* sql`SELECT pg_advisory_xact_lock(hashtextextended(${`hub.sign_in_tokens:${purpose}:${userId}`}, 0))`
        const rows = yield* sql<{ readonly count: number }>`SELECT count(*)::int AS count FROM hub.sign_in_tokens
          WHERE user_id = ${userId} AND purpose = ${purpose} AND created_at >= ${since}::timestamptz`
        return rows[0]?.count ?? 0
      }, Effect.orDie),
      redeem: (tokenHash, now) =>
        redeemRow({ tokenHash, now }).pipe(
          Effect.map((row) => (row._tag === "Some" ? toToken(row.value) : undefined)),
          Effect.orDie
        ),
      revokeUnused: (userId, purpose, now) =>
        sql<{ readonly token_hash: string }>`UPDATE hub.sign_in_tokens SET used_at = ${now}::timestamptz
          WHERE user_id = ${userId} AND purpose = ${purpose} AND used_at IS NULL RETURNING token_hash`.pipe(
          Effect.map((rows) => rows.length),
          Effect.orDie
        ),
      purge: (before) =>
        sql<{ readonly token_hash: string }>`DELETE FROM hub.sign_in_tokens
          WHERE expires_at < ${before}::timestamptz RETURNING token_hash`.pipe(
          Effect.map((rows) => rows.length),
          Effect.orDie
        )
    })
  })
)

const ViewerRow = Schema.Struct({ user_id: Schema.String, invited_by_email: Schema.String, created_at: Schema.Date })

/** The ExternalViewerStore port over `hub.external_viewers` (0006_sign_in.ts). SQL failures are defects. */
export const ExternalViewerStoreSql: Layer.Layer<ExternalViewerStore, never, SqlClient.SqlClient> = Layer.effect(
  ExternalViewerStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const byUser = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: ViewerRow,
      execute: (userId) => sql`SELECT * FROM hub.external_viewers WHERE user_id = ${userId}`
    })
    return ExternalViewerStore.of({
      add: (v) =>
        sql<{ readonly user_id: string }>`INSERT INTO hub.external_viewers (user_id, invited_by_email, created_at)
          VALUES (${v.userId}, ${v.invitedByEmail}, ${v.createdAt}::timestamptz)
          ON CONFLICT (user_id) DO NOTHING RETURNING user_id`.pipe(
          Effect.map((rows) => rows.length === 1),
          Effect.orDie
        ),
      find: (userId) =>
        byUser(userId).pipe(
          Effect.map((row) =>
            row._tag === "Some"
              ? {
                  userId: row.value.user_id,
                  invitedByEmail: row.value.invited_by_email,
                  createdAt: row.value.created_at.toISOString()
                }
              : undefined
          ),
          Effect.orDie
        )
    })
  })
)
