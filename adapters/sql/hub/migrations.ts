import type { Migration } from "../Migrator.ts"
import { idempotencyMigration } from "../platform/0001_idempotency.ts"
import { directoryTables } from "./0002_directory.ts"
import { registryTable } from "./0003_registry.ts"
import { eventsMigration } from "./0004_events.ts"
import { notificationsMigration } from "./0005_notifications.ts"
import { signInMigration } from "./0006_sign_in.ts"
import { oidcArtifactsTable } from "./0007_oidc_artifacts.ts"
import { deliveriesMigration } from "./0008_deliveries.ts"
import { catalogPatternsMigration } from "./0010_catalog_patterns.ts"
import { orgChatWebhooksMigration } from "./0011_org_chat_webhooks.ts"
import { signInRequestsMigration } from "./0012_sign_in_requests.ts"
import { shortLinksMigration } from "./0014_short_links.ts"
import { recordingGrantsMigration } from "./0015_recording_grants.ts"
import { notificationsByLinkMigration } from "./0016_notifications_by_link.ts"
import { factOutboxMigration } from "./0017_fact_outbox.ts"
import { notificationActionsMigration } from "./0018_notification_actions.ts"

/**
 * The hub's schema, `hub`: idempotency keys, the directory (organizations, users, memberships,
 * installations, flags, preferences), the service registry, accepted events and the event catalog, the
 * notification feed, each channel's deliveries, push subscriptions and organizations' chat webhooks, sessions, sign-in links and
 * the requests for them, the mail outbox, the artifacts of the hub's OpenID provider, the hub's own short links, its audit
 * of recording access changes, the outbox of facts for services and the answers notifications offer.
 */
export const hubMigrations: ReadonlyArray<Migration> = [
  idempotencyMigration("hub", 1),
  directoryTables,
  registryTable,
  eventsMigration,
  notificationsMigration,
  signInMigration,
  oidcArtifactsTable,
  deliveriesMigration,
  catalogPatternsMigration,
  orgChatWebhooksMigration,
  signInRequestsMigration,
  shortLinksMigration,
  recordingGrantsMigration,
  notificationsByLinkMigration,
  factOutboxMigration,
  notificationActionsMigration
]
