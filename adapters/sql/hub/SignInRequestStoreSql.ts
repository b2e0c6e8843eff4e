import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { SqlClient, SqlSchema } from "effect/sql"
import { makeWakeup } from "../../../core/hub/EventWakeup.ts"
import { SignInRequestStore, type SignInRequest } from "../../../core/hub/SignInRequestStore.ts"
import { Transactions } from "../../../core/kernel/Transactions.ts"
import { Database } from "../Database.ts"
import { wakeOnNotify } from "../NotifyWakeups.ts"

const Row = Schema.Struct({
  id: Schema.String,
  email: Schema.String,
  next: Schema.NullOr(Schema.String),
  browser_hash: Schema.String,
  created_at: Schema.Date
})

/** The channel additions are announced on. */
export const signInRequestsChannel = "hub_sign_in_requests_added"

/**
 * The SignInRequestStore port over `hub.sign_in_requests` (0012_sign_in_requests.ts). Taking is one DELETE of
 * the oldest row locked with SKIP LOCKED, in the caller's transaction: the workers of several servers never
 * take the same request, and one that dies before its commit leaves the row for the next. SQL failures are
 * defects.
 *
 * Wake-ups, as the producer outboxes have them (adapters/sql/ProducerOutboxSql.ts): an addition wakes this
 * instance's worker once its unit has committed, and on a Postgres server a NOTIFY sent by the INSERT itself
 * (delivered by Postgres exactly at commit, never for a unit undone) wakes the workers of the other instances,
 * each LISTENing on a connection of its own. On the embedded database one process owns the data, and the
 * in-process wake-up is all there is.
 */
export const SignInRequestStoreSql: Layer.Layer<
  SignInRequestStore,
  never,
  SqlClient.SqlClient | Database | PgClient.PgClient | Transactions
> = Layer.effect(
  SignInRequestStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const database = yield* Database
    const transactions = yield* Transactions
    const added = yield* makeWakeup
    // This instance wakes its own worker after commit, so it ignores its own notices when they come back.
    const instance = randomUUID()
    const notify = database.kind === "postgres"
    if (notify) {
      yield* wakeOnNotify({
        pg: yield* PgClient.PgClient,
        channel: signInRequestsChannel,
        instance,
        wake: added.wake,
        who: "the sign-in link worker"
      })
    }
    const takeRow = SqlSchema.findOneOption({
      Request: Schema.Void,
      Result: Row,
      execute: () => sql`
        DELETE FROM hub.sign_in_requests WHERE id = (
          SELECT id FROM hub.sign_in_requests ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING id, email, next, browser_hash, created_at`
    })
    return SignInRequestStore.of({
      add: Effect.fn("SignInRequestStoreSql.add")(function* (request: SignInRequest) {
        const insert = sql`INSERT INTO hub.sign_in_requests (id, email, next, browser_hash, created_at)
          VALUES (${request.id}, ${request.email}, ${request.next}, ${request.browserHash},
            ${request.createdAt}::timestamptz)
          RETURNING id`
        yield* notify
          ? sql`WITH added AS (${insert}) SELECT pg_notify(${signInRequestsChannel}, ${instance}) FROM added`
          : insert
        yield* transactions.afterCommit(added.wake)
      }, Effect.orDie),
      takeOldest: () =>
        takeRow(undefined).pipe(
          Effect.map((row) =>
            row._tag === "Some"
              ? {
                  id: row.value.id,
                  email: row.value.email,
                  next: row.value.next,
                  browserHash: row.value.browser_hash,
                  createdAt: row.value.created_at.toISOString()
                }
              : undefined
          ),
          Effect.orDie
        ),
      awaitAdded: added.sleep,
      pendingCount: () =>
        sql<{ readonly count: number }>`SELECT count(*)::int AS count FROM hub.sign_in_requests`.pipe(
          Effect.map((rows) => rows[0]?.count ?? 0),
          Effect.orDie
        )
    })
  })
)
