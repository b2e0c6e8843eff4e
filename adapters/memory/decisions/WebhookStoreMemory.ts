import { Effect, Layer } from "effect"
import { WebhookStore, type StoredWebhook } from "../../../core/decisions/WebhookStore.ts"

export const WebhookStoreMemory = Layer.sync(WebhookStore, () => {
  const rows = new Map<string, StoredWebhook>()
  return WebhookStore.of({
    create: (webhook) => Effect.sync(() => void rows.set(webhook.id, webhook)),
    list: (organizationId) =>
      Effect.sync(() =>
        [...rows.values()].filter((w) => w.organizationId === organizationId).sort((a, b) => (a.id < b.id ? 1 : -1))
      ),
    get: (organizationId, id) =>
      Effect.sync(() => {
        const row = rows.get(id)
        return row !== undefined && row.organizationId === organizationId ? row : undefined
      }),
    disable: (organizationId, id, at) =>
      Effect.sync(() => {
        const row = rows.get(id)
        if (row === undefined || row.organizationId !== organizationId) return undefined
        const next = row.disabledAt === undefined ? { ...row, disabledAt: at } : row
        rows.set(id, next)
        return next
      })
  })
})
