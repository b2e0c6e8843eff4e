import { Effect, Layer } from "effect"
import { ServiceStore, type StoredService } from "../../../core/hub/ServiceStore.ts"

export const ServiceStoreMemory = Layer.sync(ServiceStore, () => {
  const rows = new Map<string, StoredService>()
  return ServiceStore.of({
    create: (stored) =>
      Effect.sync(() => {
        if (rows.has(stored.service.id)) return "taken" as const
        rows.set(stored.service.id, stored)
        return "created" as const
      }),
    find: (id) => Effect.sync(() => rows.get(id)),
    list: () =>
      Effect.sync(() =>
        [...rows.values()].map((row) => row.service).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      ),
    save: (stored, expectedVersion) =>
      Effect.sync(() => {
        const current = rows.get(stored.service.id)
        if (current === undefined || current.service.version !== expectedVersion) return false
        rows.set(stored.service.id, stored)
        return true
      })
  })
})
