import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/**
 * The unified notification feed and the batched email queue.
 *
 * - `notifications`: one row per notification event, unique on (service, event_id) so a reprocessed event
 *   is never filed twice; the feed reads newest first per user.
 * - `email_queue`: notifications waiting for the user's next email; `item` is the notification as it is
 *   emailed (so the queue stands alone), `lease_until` a batcher's claim, `sent_at` marks it sent.
 */
export const notificationsMigration: Migration = {
  id: 5,
  name: "notifications",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE hub.notifications (
      id text COLLATE "C" PRIMARY KEY,
      user_id text NOT NULL,
      email text NOT NULL,
      service text COLLATE "C" NOT NULL,
      event_id text COLLATE "C" NOT NULL,
      type text NOT NULL,
      title text NOT NULL,
      body text NULL,
      url text NULL,
      category text NULL,
      created_at timestamptz NOT NULL,
      UNIQUE (service, event_id)
    )`
    yield* sql`CREATE INDEX notifications_feed ON hub.notifications (user_id, created_at DESC, id DESC)`
    yield* sql`CREATE TABLE hub.email_queue (
      notification_id text COLLATE "C" PRIMARY KEY,
      user_id text COLLATE "C" NOT NULL,
      item jsonb NOT NULL,
      created_at timestamptz NOT NULL,
      lease_until timestamptz NULL,
      sent_at timestamptz NULL
    )`
    yield* sql`CREATE INDEX email_queue_pending ON hub.email_queue (user_id, created_at) WHERE sent_at IS NULL`
  })
}
