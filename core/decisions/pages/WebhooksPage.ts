import type { Block, PageDocument } from "../../kernel/PageDocument.ts"
import type { DeliveryView } from "../WebhookDeliveries.ts"
import type { WebhookEndpoint } from "../WebhookStore.ts"
import { actionId } from "./Addresses.ts"
import { timeLabel } from "./Labels.ts"

export interface WebhooksView {
  readonly webhooks: ReadonlyArray<{
    readonly webhook: WebhookEndpoint
    readonly deliveries: ReadonlyArray<DeliveryView>
  }>
}

const deliveryStatus = (d: DeliveryView): string => {
  switch (d.status) {
    case "pending":
      return d.attempts > 0 ? `Retrying (next ${timeLabel(d.nextAttemptAt)})` : "Pending"
    case "delivered":
      return "Delivered"
    case "failed":
      return "Failed"
    case "skipped":
      return "Skipped (endpoint disabled)"
  }
}

const section = ({ webhook, deliveries }: WebhooksView["webhooks"][number]): Array<Block> => [
  {
    type: "heading",
    text: `${webhook.url}${webhook.disabledAt === undefined ? "" : " (disabled)"}`,
    level: 2
  },
  deliveries.length === 0
    ? { type: "callout", tone: "info", text: "No deliveries yet." }
    : {
        type: "table",
        columns: [
          { key: "event", label: "Event" },
          { key: "status", label: "Status" },
          { key: "attempts", label: "Attempts" },
          { key: "lastError", label: "Last error" },
          { key: "created", label: "Created" }
        ],
        rows: deliveries.map((d) => ({
          event: d.eventType,
          status: deliveryStatus(d),
          attempts: String(d.attempts),
          lastError: d.lastError ?? (d.lastStatusCode === undefined ? "" : `HTTP ${d.lastStatusCode}`),
          created: timeLabel(d.createdAt)
        }))
      },
  ...(webhook.disabledAt === undefined
    ? [
        {
          type: "actionRow" as const,
          actions: [
            {
              actionId: actionId({ _tag: "DisableWebhook", webhookId: webhook.id }),
              label: "Disable",
              style: "danger" as const,
              confirm: `Disable deliveries to ${webhook.url}?`
            }
          ]
        }
      ]
    : [])
]

/** Signed webhook endpoints (org admins) with their recent deliveries; callers register them with their key. */
export const webhooksPage = (view: WebhooksView): PageDocument => ({
  id: "webhooks",
  title: "Webhooks",
  description: "Endpoints that receive signed decision events, with their latest deliveries.",
  blocks: [
    ...(view.webhooks.length === 0
      ? [
          {
            type: "callout" as const,
            tone: "info" as const,
            text: "No webhooks yet. Callers register them with their key: POST /api/v1/webhooks."
          }
        ]
      : []),
    ...view.webhooks.flatMap(section)
  ]
})
