import { idempotencyStores } from "../support/IdempotencyStores.ts"
import { TransactionsContract } from "./Transactions.contract.ts"

for (const store of idempotencyStores) TransactionsContract(store.name, store.layer, store.name !== "memory")
