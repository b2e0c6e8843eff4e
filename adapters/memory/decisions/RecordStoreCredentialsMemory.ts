import { Effect, Layer } from "effect"
import {
  RecordStoreCredentials,
  type StoredRecordStoreCredentials
} from "../../../core/decisions/RecordStoreCredentials.ts"

export const RecordStoreCredentialsMemory = Layer.sync(RecordStoreCredentials, () => {
  const rows = new Map<string, StoredRecordStoreCredentials>()
  return RecordStoreCredentials.of({
    put: (credentials) => Effect.sync(() => void rows.set(credentials.organizationId, credentials)),
    get: (organizationId) => Effect.sync(() => rows.get(organizationId)),
    remove: (organizationId) => Effect.sync(() => rows.delete(organizationId))
  })
})
