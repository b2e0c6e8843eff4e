import { assert, describe, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { rateLimitMigrations } from "../../adapters/sql/ratelimits/migrations.ts"
import {
  makeRateLimiterStoreSql,
  purgeRateLimits,
  RateLimiterStoreSql
} from "../../adapters/sql/ratelimits/RateLimiterStoreSql.ts"
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

describe("RateLimiterStoreSql's purge", () => {
  for (const backend of sqlBackends) {
    layer(
      // The store without its purge every minute: the test runs the purge itself.
      Layer.effect(RateLimiter.RateLimiterStore, makeRateLimiterStoreSql).pipe(
        Layer.provideMerge(migrationsLayer("rate_limits", rateLimitMigrations).pipe(Layer.provideMerge(backend.layer)))
      ),
      { excludeTestServices: true, timeout: "60 seconds" }
    )((it) => {
      it.effect(`removes the windows and buckets past their end, and only those (${backend.name})`, () =>
        Effect.gen(function* () {
          const store = yield* RateLimiter.RateLimiterStore
          const sql = yield* SqlClient.SqlClient
          const short = { tokens: 1, refillRate: Duration.millis(50), limit: 5 }
          const long = { tokens: 1, refillRate: Duration.minutes(1), limit: 5 }
          yield* store.fixedWindow({ ...short, key: "spent-window" })
          yield* store.fixedWindow({ ...long, key: "live-window" })
          yield* store.tokenBucket({ ...short, key: "spent-bucket", allowOverflow: false })
          yield* store.tokenBucket({ ...long, key: "live-bucket", allowOverflow: false })
          yield* Effect.sleep("200 millis")
          yield* purgeRateLimits
          const keys = yield* sql<{ readonly key: string }>`
            SELECT key FROM rate_limits.windows UNION ALL SELECT key FROM rate_limits.buckets ORDER BY key`
          assert.deepStrictEqual(
            keys.map((row) => row.key),
            ["live-bucket", "live-window"]
          )
        })
      )

      it.effect(`keeps its budgets in unlogged tables: no log record or disk flush per request (${backend.name})`, () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const tables = yield* sql<{ readonly relname: string; readonly relpersistence: string }>`
            SELECT c.relname, c.relpersistence FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'rate_limits' AND c.relkind = 'r' ORDER BY c.relname`
          assert.deepStrictEqual(
            tables.map((t) => [t.relname, t.relpersistence]),
            [
              ["buckets", "u"],
              ["migrations", "p"],
              ["windows", "u"]
            ]
          )
        })
      )
    })
  }
})
