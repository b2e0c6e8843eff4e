import { Effect, Layer } from "effect"
import { PushSubscriptionStore, type PushSubscription } from "../../../core/hub/PushSubscriptions.ts"

export const PushSubscriptionStoreMemory = Layer.sync(PushSubscriptionStore, () => {
  const rows = new Map<string, PushSubscription>()
  const byEndpoint = (endpoint: string) => [...rows.values()].find((s) => s.endpoint === endpoint)
  const oldestFirst = (userId: string) =>
    [...rows.values()]
      .filter((s) => s.userId === userId)
      .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1))
  const newestFirst = (userId: string) => oldestFirst(userId).reverse()
  return PushSubscriptionStore.of({
    save: (subscription, keepAtMost) =>
      Effect.sync(() => {
        const existing = byEndpoint(subscription.endpoint)
        const kept = existing === undefined ? subscription : { ...subscription, id: existing.id }
        rows.set(kept.id, { ...kept })
        for (const old of newestFirst(subscription.userId).slice(keepAtMost)) rows.delete(old.id)
        return kept.id
      }),
    find: (id) => Effect.sync(() => (rows.has(id) ? { ...rows.get(id)! } : undefined)),
    forUser: (userId) => Effect.sync(() => oldestFirst(userId).map((s) => ({ ...s }))),
    remove: (userId, endpoint) =>
      Effect.sync(() => {
        const found = byEndpoint(endpoint)
        if (found === undefined || found.userId !== userId) return false
        rows.delete(found.id)
        return true
      }),
    removeById: (id) => Effect.sync(() => void rows.delete(id))
  })
})
