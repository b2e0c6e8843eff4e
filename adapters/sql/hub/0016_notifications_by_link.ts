import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/**
 * A producer settles its notifications by what they lead to (NotificationStore `settle`: a decision answered
 * settles every notification about it, whoever it was filed for): found by service and link, not by a scan,
 * and their deliveries still pending found by notification to be cancelled.
 */
export const notificationsByLinkMigration: Migration = {
  id: 16,
  name: "notifications_by_link",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE INDEX notifications_by_link ON hub.notifications (service, url) WHERE url IS NOT NULL`
    yield* sql`CREATE INDEX deliveries_pending_by_notification ON hub.deliveries (notification_id)
      WHERE status = 'pending'`
  })
}
