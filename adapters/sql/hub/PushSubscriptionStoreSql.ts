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

/**
 * The PushSubscriptionStore port over `hub.push_subscriptions` (0008_deliveries.ts). A registration is one
 * transaction: the person's advisory lock, the upsert, and the removal of what is past the person's limit.
 * SQL failures are defects.
 */
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
      save: (s, keepAtMost) =>
        sql
          .withTransaction(
            Effect.gen(function* () {
              // One person's registrations one at a time, so that two at once cannot both keep an extra one.
              yield* sql`SELECT pg_advisory_xact_lock(hashtext('hub.push_subscriptions'), hashtext(${s.userId}))`
              const [kept] = yield* sql<{ readonly id: string }>`
                INSERT INTO hub.push_subscriptions (id, user_id, endpoint, keys, created_at)
                VALUES (${s.id}, ${s.userId}, ${s.endpoint}, ${s.sealedKeys}, ${s.createdAt}::timestamptz)
                ON CONFLICT (endpoint) DO UPDATE
                  SET user_id = EXCLUDED.user_id, keys = EXCLUDED.keys, created_at = EXCLUDED.created_at
                RETURNING id`
              yield* sql`
                DELETE FROM hub.push_subscriptions WHERE id IN (
                  SELECT id FROM hub.push_subscriptions WHERE user_id = ${s.userId}
                  ORDER BY created_at DESC, id DESC OFFSET ${keepAtMost})`
              return kept!.id
            })
          )
          .pipe(Effect.orDie),
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
