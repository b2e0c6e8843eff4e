import type { Migration } from "../Migrator.ts"
import { idempotencyMigration } from "../platform/0001_idempotency.ts"
import { recordsTable } from "./0002_records.ts"
import { apiKeysTable } from "./0003_api_keys.ts"
import { sessionsTable } from "./0004_sessions.ts"
import { outboxTable } from "./0005_outbox.ts"
import { outboxDelivery } from "./0006_outbox_delivery.ts"
import { organizationStatusesTables } from "./0007_organization_statuses.ts"
import { recordGuards } from "./0008_record_guards.ts"

/**
 * The task inbox service's schema, `tasks`: idempotency keys, the record store's records (when Postgres is
 * the store), API keys, sessions, the event outbox with its delivery state, organizations' statuses as the hub's
 * facts told them, and the locks and write notes of guarded writes to an upstream record store.
 */
export const tasksMigrations: ReadonlyArray<Migration> = [
  idempotencyMigration("tasks", 1),
  recordsTable,
  apiKeysTable,
  sessionsTable,
  outboxTable,
  outboxDelivery,
  organizationStatusesTables,
  recordGuards
]
