import { Clock, Effect } from "effect"
import { IdGenerator } from "../kernel/Ids.ts"
import { isoAt } from "../kernel/Timestamp.ts"
import type { Transition } from "./DecisionMachine.ts"
import { publicDecision } from "./DecisionView.ts"
import type { WebhookDelivery } from "./WebhookOutbox.ts"
import { webhookStatuses } from "./WebhookDelivery.ts"
import { WebhookStore } from "./WebhookStore.ts"

/**
 * The webhook deliveries a change implies: one per active endpoint of the organization when the decision
 * moves to needs_info, resolved, expired or cancelled. They are saved with the change, in one transaction.
 */
export const makeTransitionWebhooks = Effect.gen(function* () {
  const webhooks = yield* WebhookStore
  const ids = yield* IdGenerator

  return Effect.fnUntraced(function* (transition: Transition) {
    const change = transition.consequences.find((c) => c._tag === "StatusChanged" && webhookStatuses.includes(c.to))
    if (change === undefined || change._tag !== "StatusChanged") return []
    const decision = transition.decision
    const endpoints = (yield* webhooks.list(decision.organizationId)).filter((w) => w.disabledAt === undefined)
    const createdAt = isoAt(yield* Clock.currentTimeMillis)
    const data = { decision: publicDecision(decision, { actions: true }) }
    const deliveries: Array<WebhookDelivery> = []
    for (const endpoint of endpoints) {
      const id = yield* ids.next
      const type = `decision.${change.to}`
      deliveries.push({
        id,
        organizationId: decision.organizationId,
        webhookId: endpoint.id,
        decisionId: decision.id,
        eventType: type,
        payload: JSON.stringify({ id, type, occurredAt: decision.updatedAt, data }),
        status: "pending",
        attempts: 0,
        nextAttemptAt: createdAt,
        createdAt
      })
    }
    return deliveries
  })
})
