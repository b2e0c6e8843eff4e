import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/**
 * Notification channels that really deliver (docs/notifications.md, "Channels, preferences and delivery").
 *
 * - `notifications.read_at`: the person's bell; null while unread.
 * - `deliveries`: the outbox and delivery log of every channel that leaves the hub (email, chat, push): one
 *   row per notification, channel and target (a push subscription), written in the unit that files the
 *   notification. Its id is `<notification id>/<channel>[/<target>]`, so a notification is never queued
 *   twice on one channel. `status` pending -> sending (claimed, counted as an attempt, committed before
 *   anything is sent) -> sent | pending again (a retry, at `next_attempt_at`) | failed | cancelled; a row
 *   left `sending` past its lease by a server that died is marked `interrupted` and never sent again.
 * - `push_subscriptions`: the browsers a person registered for web push; `keys` is sealed.
 * - The email queue of 0005 becomes email deliveries (what was still waiting), then goes.
 */
export const deliveriesMigration: Migration = {
  id: 8,
  name: "deliveries",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE hub.notifications ADD COLUMN read_at timestamptz NULL`
    yield* sql`CREATE INDEX notifications_unread ON hub.notifications (user_id) WHERE read_at IS NULL`
    yield* sql`CREATE TABLE hub.deliveries (
      id text COLLATE "C" PRIMARY KEY,
      notification_id text COLLATE "C" NOT NULL,
      user_id text COLLATE "C" NOT NULL,
      channel text NOT NULL,
      target text COLLATE "C" NOT NULL,
      status text NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL,
      lease_until timestamptz NULL,
      last_error text NULL,
      created_at timestamptz NOT NULL,
      sent_at timestamptz NULL
    )`
    yield* sql`CREATE INDEX deliveries_due ON hub.deliveries (channel, next_attempt_at) WHERE status = 'pending'`
    yield* sql`CREATE INDEX deliveries_sending ON hub.deliveries (lease_until) WHERE status = 'sending'`
    yield* sql`CREATE INDEX deliveries_log ON hub.deliveries (user_id, created_at DESC, id DESC)`
    yield* sql`CREATE INDEX deliveries_notification ON hub.deliveries (notification_id)`
    yield* sql`CREATE TABLE hub.push_subscriptions (
      id text COLLATE "C" PRIMARY KEY,
      user_id text COLLATE "C" NOT NULL,
      endpoint text COLLATE "C" NOT NULL UNIQUE,
      keys text NOT NULL,
      created_at timestamptz NOT NULL
    )`
    yield* sql`CREATE INDEX push_subscriptions_user ON hub.push_subscriptions (user_id)`
    yield* sql`INSERT INTO hub.deliveries (id, notification_id, user_id, channel, target, status, next_attempt_at,
        created_at)
      SELECT notification_id || '/email', notification_id, user_id, 'email', '', 'pending', created_at, created_at
      FROM hub.email_queue WHERE sent_at IS NULL`
    yield* sql`DROP TABLE hub.email_queue`
  })
}
