import type { Migration } from "../Migrator.ts"
import { idempotencyMigration } from "../platform/0001_idempotency.ts"
import { directoryTables } from "./0002_directory.ts"
import { registryTable } from "./0003_registry.ts"
import { eventsMigration } from "./0004_events.ts"
import { notificationsMigration } from "./0005_notifications.ts"

/**
 * The hub's schema, `hub`: idempotency keys, the directory (organizations, users, memberships,
 * installations, flags, preferences), the service registry, accepted events and the event catalog, the
 * notification feed and the email queue.
 */
export const hubMigrations: ReadonlyArray<Migration> = [
  idempotencyMigration("hub", 1),
  directoryTables,
  registryTable,
  eventsMigration,
  notificationsMigration
]
