import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/**
 * The answers a notification's message offers (`[{label, url}]`, core/hub/NotificationStore.ts `actions`): a
 * decision's answer links, for the email and the person's chat message. Null when there are none, and once
 * the notification is settled.
 */
export const notificationActionsMigration: Migration = {
  id: 18,
  name: "notification_actions",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE hub.notifications ADD COLUMN actions jsonb NULL`
  })
}
