import { Effect, Layer } from "effect"
import { CatalogStore, type EventCatalogEntry } from "../../../core/hub/CatalogStore.ts"

export const CatalogStoreMemory = Layer.sync(CatalogStore, () => {
  const rows = new Map<string, EventCatalogEntry>()
  return CatalogStore.of({
    upsert: (entry) =>
      Effect.sync(() => {
        const stored = { ...structuredClone(entry), version: (rows.get(entry.type)?.version ?? 0) + 1 }
        rows.set(entry.type, stored)
        return structuredClone(stored)
      }),
    insertIfAbsent: (entry) =>
      Effect.sync(() => {
        if (rows.has(entry.type)) return false
        rows.set(entry.type, { ...structuredClone(entry), version: 1 })
        return true
      }),
    find: (type) => Effect.sync(() => structuredClone(rows.get(type))),
    list: (producer) =>
      Effect.sync(() =>
        [...rows.values()]
          .filter((entry) => producer === undefined || entry.producer === producer)
          .sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0))
          .map((entry) => structuredClone(entry))
      )
  })
})
