import { Duration, Effect, Layer, Schedule } from "effect"
import { RateLimiterError, RateLimiterStore, RateLimitStoreError } from "effect/persistence/RateLimiter"
import { SqlClient } from "effect/sql"

/** The database's clock, in epoch milliseconds, the same for every read of it within one statement. */
const nowMs = "(extract(epoch from statement_timestamp()) * 1000)::float8"

const storeError = (operation: string) => (cause: unknown) =>
  new RateLimiterError({
    reason: new RateLimitStoreError({ message: `Failed to run the ${operation} rate-limit statement`, cause })
  })

const unsupported = (operation: string) =>
  Effect.fail(
    new RateLimiterError({
      reason: new RateLimitStoreError({ message: `${operation} is not kept in the SQL rate-limit store` })
    })
  )

interface BucketRow {
  readonly tokens: number
  readonly last_refill_ms: number
  readonly expires_at_ms: number
  readonly now_ms: number
}

/**
 * effect's `RateLimiterStore` over the `rate_limits` schema (adapters/sql/ratelimits/migrations.ts), with the
 * semantics of its memory and Redis stores, so every instance on one Postgres shares each budget:
 *
 * - `fixedWindow` is one atomic upsert per key: a window past its end starts again; a request that would
 *   pass `limit` leaves the row alone and answers the count it would have made; any other adds its tokens
 *   and moves the window's end by `refillRate` per token.
 * - `tokenBucket` locks the key's row in a transaction: whole `refillRate` intervals refill the bucket (up
 *   to `limit`), then the tokens are taken when there are enough (or always, with `allowOverflow`).
 * - The adaptive limiter (learning a remote API's limits) is not kept here: it fails with a store error.
 *
 * Times are the database's, never an instance's, so instances with drifting clocks still agree. Rows past
 * their end are removed every minute in the background.
 */
export const makeRateLimiterStoreSql = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const now = sql.literal(nowMs)

  const fixedWindow = (options: {
    readonly key: string
    readonly tokens: number
    readonly refillRate: Duration.Duration
    readonly limit: number | undefined
  }) => {
    // More tokens than the limit at once can never fit: refused without touching the window (as in memory).
    if (options.limit !== undefined && options.tokens > options.limit) {
      return Effect.succeed([options.tokens, 0] as const)
    }
    const refill = Duration.toMillis(options.refillRate)
    const limit = options.limit ?? null
    return sql<{ readonly asked: number; readonly ttl: number }>`
      INSERT INTO rate_limits.windows AS w (key, count, asked, expires_at_ms)
      VALUES (${options.key}, ${options.tokens}::float8, ${options.tokens}::float8,
        ${now} + greatest(1, ceil(${refill}::float8 * ${options.tokens}::float8)))
      ON CONFLICT (key) DO UPDATE SET
        count = CASE
          WHEN w.expires_at_ms <= ${now} THEN excluded.count
          WHEN w.count + excluded.count > ${limit}::float8 THEN w.count
          ELSE w.count + excluded.count END,
        asked = CASE WHEN w.expires_at_ms <= ${now} THEN excluded.count ELSE w.count + excluded.count END,
        expires_at_ms = CASE
          WHEN w.expires_at_ms <= ${now} THEN excluded.expires_at_ms
          WHEN w.count + excluded.count > ${limit}::float8 THEN w.expires_at_ms
          ELSE w.expires_at_ms + ${refill}::float8 * excluded.count END
      RETURNING asked, expires_at_ms - ${now} AS ttl`.pipe(
      Effect.map(([row]) => [Number(row!.asked), Math.max(0, Number(row!.ttl))] as const),
      Effect.mapError(storeError("fixedWindow"))
    )
  }

  const tokenBucket = (options: {
    readonly key: string
    readonly tokens: number
    readonly limit: number
    readonly refillRate: Duration.Duration
    readonly allowOverflow: boolean
  }) => {
    const refill = Duration.toMillis(options.refillRate)
    return Effect.gen(function* () {
      // The row exists (as if past its end) before it is locked, so two first requests queue on one row.
      yield* sql`INSERT INTO rate_limits.buckets (key, tokens, last_refill_ms, expires_at_ms)
        VALUES (${options.key}, ${options.limit}::float8, ${now}, ${now}) ON CONFLICT (key) DO NOTHING`
      const [row] = yield* sql<BucketRow>`
        SELECT tokens, last_refill_ms, expires_at_ms, ${now} AS now_ms
        FROM rate_limits.buckets WHERE key = ${options.key} FOR UPDATE`
      const at = Number(row!.now_ms)
      const live = Number(row!.expires_at_ms) > at
      let current = live ? Number(row!.tokens) : options.limit
      let lastRefill = live ? Number(row!.last_refill_ms) : at
      const intervals = Math.floor((at - lastRefill) / refill)
      if (intervals > 0) {
        current = Math.min(options.limit, current + intervals)
        lastRefill += intervals * refill
      }
      if (current >= options.limit) lastRefill = at
      const next = current - options.tokens
      const stored = next >= 0 || options.allowOverflow ? next : current
      const elapsed = Math.max(0, at - lastRefill)
      const ttl = Math.max(1, Math.ceil(Math.ceil(options.limit - stored) * refill - elapsed))
      yield* sql`UPDATE rate_limits.buckets
        SET tokens = ${stored}::float8, last_refill_ms = ${lastRefill}::float8, expires_at_ms = ${at + ttl}::float8
        WHERE key = ${options.key}`
      return [next, elapsed] as const
    }).pipe(sql.withTransaction, Effect.mapError(storeError("tokenBucket")))
  }

  return RateLimiterStore.of({
    fixedWindow,
    tokenBucket,
    adaptiveConsume: () => unsupported("The adaptive limiter"),
    adaptiveFeedback: () => unsupported("The adaptive limiter")
  })
})

/** Removes the windows and buckets past their end: they answer as absent already; this keeps the tables small. */
export const purgeRateLimits = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const now = sql.literal(nowMs)
  yield* sql`DELETE FROM rate_limits.windows WHERE expires_at_ms <= ${now}`
  yield* sql`DELETE FROM rate_limits.buckets WHERE expires_at_ms <= ${now}`
})

/** The store, and its purge every minute (a failure is logged and tried again the next minute). */
export const RateLimiterStoreSql: Layer.Layer<RateLimiterStore, never, SqlClient.SqlClient> = Layer.effect(
  RateLimiterStore,
  Effect.gen(function* () {
    yield* purgeRateLimits.pipe(
      Effect.catchCause((cause) => Effect.logWarning("could not remove spent rate limits", cause)),
      Effect.repeat(Schedule.spaced("1 minute")),
      Effect.forkScoped
    )
    return yield* makeRateLimiterStoreSql
  })
)
