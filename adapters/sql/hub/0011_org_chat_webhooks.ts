import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Migration } from "../Migrator.ts"

/**
 * An organization's own chat channel (docs/notifications.md): one Slack-compatible incoming webhook per
 * organization, its URL sealed with the hub's secrets key (it is a credential), its host kept in the clear
 * so admins can tell which channel is set without the URL ever being shown.
 */
export const orgChatWebhooksMigration: Migration = {
  id: 11,
  name: "org_chat_webhooks",
  up: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE hub.org_chat_webhooks (
      org_id text COLLATE "C" PRIMARY KEY,
      url text NOT NULL,
      host text NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  })
}
