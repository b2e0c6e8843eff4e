import { Layer } from "effect"
import { IdempotencyStoreMemory } from "../../adapters/memory/IdempotencyStoreMemory.ts"
import { IdempotencyStoreSql } from "../../adapters/sql/IdempotencyStoreSql.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { idempotencyMigration } from "../../adapters/sql/platform/0001_idempotency.ts"
import type { IdempotencyStore } from "../../core/idempotency/IdempotencyStore.ts"
import { sqlBackends, type SqlBackend } from "./Databases.ts"

const schema = "platform"

/** The SQL store on a freshly migrated schema of the backend's fresh database. */
export const idempotencyStoreOn = (backend: SqlBackend): Layer.Layer<IdempotencyStore, unknown> =>
  IdempotencyStoreSql(schema).pipe(
    Layer.provide(migrationsLayer(schema, [idempotencyMigration(schema)])),
    Layer.provide(backend.layer)
  )

/** Every IdempotencyStore adapter, by name: memory, then one per SQL backend. */
export const idempotencyStores: ReadonlyArray<{
  readonly name: string
  readonly layer: Layer.Layer<IdempotencyStore, unknown>
}> = [
  { name: "memory", layer: IdempotencyStoreMemory },
  ...sqlBackends.map((backend) => ({ name: backend.name, layer: idempotencyStoreOn(backend) }))
]
