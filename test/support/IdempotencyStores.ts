import { Layer } from "effect"
import { IdempotencyStoreMemory } from "../../adapters/memory/IdempotencyStoreMemory.ts"
import { TransactionsMemory } from "../../adapters/memory/TransactionsMemory.ts"
import { IdempotencyStoreSql } from "../../adapters/sql/IdempotencyStoreSql.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { idempotencyMigration } from "../../adapters/sql/platform/0001_idempotency.ts"
import { TransactionsSql } from "../../adapters/sql/TransactionsSql.ts"
import type { IdempotencyStore } from "../../core/idempotency/IdempotencyStore.ts"
import type { Transactions } from "../../core/kernel/Transactions.ts"
import { sqlBackendsBothWays, type SqlBackend } from "./Databases.ts"

const schema = "platform"

/** The SQL store on a freshly migrated schema of the backend's fresh database, with its transactions. */
export const idempotencyStoreOn = (backend: SqlBackend): Layer.Layer<IdempotencyStore | Transactions, unknown> =>
  Layer.merge(IdempotencyStoreSql(schema), TransactionsSql).pipe(
    Layer.provide(migrationsLayer(schema, [idempotencyMigration(schema)])),
    Layer.provide(backend.layer)
  )

/** Every IdempotencyStore adapter, by name, with the Transactions of its family: memory, then each SQL backend. */
export const idempotencyStores: ReadonlyArray<{
  readonly name: string
  readonly layer: Layer.Layer<IdempotencyStore | Transactions, unknown>
}> = [
  { name: "memory", layer: Layer.merge(IdempotencyStoreMemory, TransactionsMemory) },
  ...sqlBackendsBothWays.map((backend) => ({ name: backend.name, layer: idempotencyStoreOn(backend) }))
]
