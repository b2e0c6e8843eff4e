import { idempotencyStores } from "../support/IdempotencyStores.ts"
import { IdempotencyStoreContract } from "./IdempotencyStore.contract.ts"

for (const store of idempotencyStores) IdempotencyStoreContract(store.name, store.layer)
