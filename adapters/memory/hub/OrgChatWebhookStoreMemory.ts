import { Effect, Layer } from "effect"
import { OrgChatWebhookStore, type OrgChatWebhook } from "../../../core/hub/OrgChatWebhooks.ts"

export const OrgChatWebhookStoreMemory = Layer.sync(OrgChatWebhookStore, () => {
  const rows = new Map<string, OrgChatWebhook>()
  return OrgChatWebhookStore.of({
    find: (orgId) => Effect.sync(() => (rows.has(orgId) ? { ...rows.get(orgId)! } : undefined)),
    findAll: (orgIds) =>
      Effect.sync(() => [...new Set(orgIds)].flatMap((orgId) => (rows.has(orgId) ? [{ ...rows.get(orgId)! }] : []))),
    save: (webhook) => Effect.sync(() => void rows.set(webhook.orgId, { ...webhook })),
    remove: (orgId) => Effect.sync(() => rows.delete(orgId))
  })
})
