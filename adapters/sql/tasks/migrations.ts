import type { Migration } from "../Migrator.ts"
import { idempotencyMigration } from "../platform/0001_idempotency.ts"

/** The task inbox service's schema, `tasks`. */
export const tasksMigrations: ReadonlyArray<Migration> = [idempotencyMigration("tasks", 1)]
