import type { Migration } from "../Migrator.ts"
import { idempotencyMigration } from "../platform/0001_idempotency.ts"

/** The hub's schema, `hub`. */
export const hubMigrations: ReadonlyArray<Migration> = [idempotencyMigration("hub", 1)]
