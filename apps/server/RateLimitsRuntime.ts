import * as NodeRedis from "@effect/platform-node/NodeRedis"
import { Effect, Layer, Option, Redacted } from "effect"
import * as RateLimiter from "effect/persistence/RateLimiter"
import type { RedisError } from "effect/persistence/Redis"
import type { SqlClient, SqlError } from "effect/sql"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { rateLimitMigrations } from "../../adapters/sql/ratelimits/migrations.ts"
import { RateLimiterStoreSql } from "../../adapters/sql/ratelimits/RateLimiterStoreSql.ts"

export interface RateLimitStoreConfig {
  readonly redisUrl: Option.Option<Redacted.Redacted<string>>
  readonly redisKeyPrefix: string
  readonly databaseUrl: Option.Option<Redacted.Redacted<string>>
}

/**
 * Where the rate budgets live, chosen once at start: Redis when REDIS_URL is set, else the Postgres server of
 * DATABASE_URL (the `rate_limits` schema), else this process's memory (the embedded database has one process
 * per DATA_DIR, so that is every instance there is). A Redis that cannot be reached at start fails the start,
 * as a database that cannot be reached does.
 */
export const RateLimiterStoreFromConfig = (
  config: RateLimitStoreConfig
): Layer.Layer<RateLimiter.RateLimiterStore, RedisError | SqlError.SqlError, SqlClient.SqlClient> => {
  if (Option.isSome(config.redisUrl)) {
    return RateLimiter.layerStoreRedis({ prefix: config.redisKeyPrefix }).pipe(
      Layer.provide(NodeRedis.layer({ url: Redacted.value(config.redisUrl.value) })),
      Layer.tapError(() =>
        Effect.logError("REDIS_URL: the Redis server cannot be reached; the rate-limit budgets need it to start")
      )
    )
  }
  if (Option.isSome(config.databaseUrl)) {
    return RateLimiterStoreSql.pipe(Layer.provide(migrationsLayer("rate_limits", rateLimitMigrations)))
  }
  return RateLimiter.layerStoreMemory
}
