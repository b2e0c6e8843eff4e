import { Clock, Effect, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { Database } from "../../adapters/sql/Database.ts"
import { IdempotencyStore } from "../../core/idempotency/IdempotencyStore.ts"
import { Readiness } from "../../core/kernel/index.ts"

/** Forgets a service's idempotency records past their 24-hour retention, hourly (each service its own store). */
export const purgeIdempotency = Layer.effectDiscard(
  Effect.gen(function* () {
    const store = yield* IdempotencyStore
    yield* Clock.currentTimeMillis.pipe(
      Effect.flatMap(store.purgeExpired),
      Effect.repeat(Schedule.spaced("1 hour")),
      Effect.forkScoped
    )
  })
)

/** Readiness is the database answering a ping within its timeout. */
export const ReadinessFromDatabase = Layer.effect(
  Readiness,
  Effect.map(Database, (database) => Readiness.of({ check: database.ping }))
)

/**
 * The embedded database has no background statistics collector (a Postgres server's autovacuum analyzes
 * tables as they grow), so without this every list would be planned as if its tables were empty: scans
 * and sorts instead of index reads. Analyzed shortly after start, then hourly, off the request path.
 */
export const analyzeEmbedded = Layer.effectDiscard(
  Effect.gen(function* () {
    const database = yield* Database
    if (database.kind !== "embedded") return
    const sql = yield* SqlClient.SqlClient
    yield* sql`ANALYZE`.pipe(
      Effect.catchCause((cause) => Effect.logWarning("could not analyze the embedded database", cause)),
      Effect.delay("5 seconds"),
      Effect.repeat(Schedule.spaced("1 hour")),
      Effect.forkScoped
    )
  })
)
