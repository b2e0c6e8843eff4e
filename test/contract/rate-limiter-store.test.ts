import { Layer } from "effect"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { rateLimitMigrations } from "../../adapters/sql/ratelimits/migrations.ts"
import { RateLimiterStoreSql } from "../../adapters/sql/ratelimits/RateLimiterStoreSql.ts"
import { sqlBackends } from "../support/Databases.ts"
import { freshPrefix, redisLayer, testRedisUrl } from "../support/Redis.ts"
import { RateLimiterStoreContract } from "./RateLimiterStore.contract.ts"

RateLimiterStoreContract("memory", RateLimiter.layerStoreMemory)
for (const backend of sqlBackends) {
  RateLimiterStoreContract(
    backend.name,
    RateLimiterStoreSql.pipe(
      Layer.provide(migrationsLayer("rate_limits", rateLimitMigrations)),
      Layer.provide(backend.layer)
    )
  )
}
if (testRedisUrl !== undefined) {
  RateLimiterStoreContract(
    "redis",
    RateLimiter.layerStoreRedis({ prefix: freshPrefix() }).pipe(Layer.provide(redisLayer(testRedisUrl)))
  )
}
