import type { ImageSchema } from "../../adapters/sql/EmbeddedImage.ts"
import { decisionsMigrations } from "../../adapters/sql/decisions/migrations.ts"
import { hubMigrations } from "../../adapters/sql/hub/migrations.ts"
import { tasksMigrations } from "../../adapters/sql/tasks/migrations.ts"

/**
 * The schemas the bundled server migrates on the embedded database (rate budgets stay in memory there, so no
 * `rate_limits`): what an embedded database image holds, and what a server checks an image against.
 */
export const embeddedSchemas: ReadonlyArray<ImageSchema> = [
  { schema: "hub", migrations: hubMigrations },
  { schema: "tasks", migrations: tasksMigrations },
  { schema: "decisions", migrations: decisionsMigrations }
]
