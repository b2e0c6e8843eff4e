import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { PushSubscriptionStore, type PushSubscription } from "../../../core/hub/PushSubscriptions.ts"

const Row = Schema.Struct({
  id: Schema.String,
  user_id: Schema.String,
  endpoint: Schema.String,
  keys: Schema.String,
  created_at: Schema.Date
})

const toSubscription = (row: typeof Row.Type): PushSubscription => ({
  id: row.id,
  userId: row.user_id,
  endpoint: row.endpoint,
  sealedKeys: row.keys,
  createdAt: row.created_at.toISOString()
})

/** The PushSubscriptionStore port over `hub.push_subscriptions` (0008_deliveries.ts). SQL failures are defects. */
export const PushSubscriptionStoreSql: Layer.Layer<PushSubscriptionStore, never, SqlClient.SqlClient> = Layer.effect(
  PushSubscriptionStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const byId = SqlSchema.findAll({
      Request: Schema.String,
      Result: Row,
      execute: (id) => sql`SELECT * FROM hub.push_subscriptions WHERE id = ${id}`
    })
    const byUser = SqlSchema.findAll({
      Request: Schema.String,
      Result: Row,
      execute: (userId) => sql`SELECT * FROM hub.push_subscriptions WHERE user_id = ${userId} ORDER BY created_at, id`
    })
    return PushSubscriptionStore.of({
      save: (s) =>
        sql<{ readonly id: string }>`
          INSERT INTO hub.push_subscriptions (id, user_id, endpoint, keys, created_at)
          VALUES (${s.id}, ${s.userId}, ${s.endpoint}, ${s.sealedKeys}, ${s.createdAt}::timestamptz)
          ON CONFLICT (endpoint) DO UPDATE SET user_id = EXCLUDED.user_id, keys = EXCLUDED.keys
          RETURNING id`.pipe(
          Effect.map((rows) => rows[0]!.id),
          Effect.orDie
        ),
      find: (id) =>
        byId(id).pipe(
          Effect.map((rows) => (rows[0] === undefined ? undefined : toSubscription(rows[0]))),
          Effect.orDie
        ),
      forUser: (userId) =>
        byUser(userId).pipe(
          Effect.map((rows) => rows.map(toSubscription)),
          Effect.orDie
        ),
      remove: (userId, endpoint) =>
        sql<{ readonly id: string }>`
          DELETE FROM hub.push_subscriptions WHERE user_id = ${userId} AND endpoint = ${endpoint} RETURNING id`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie
        ),
      removeById: (id) => sql`DELETE FROM hub.push_subscriptions WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie)
    })
  })
)
