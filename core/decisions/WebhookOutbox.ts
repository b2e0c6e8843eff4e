import { Context, Effect } from "effect"

/** A delivery's state: waiting to be sent (or retried), delivered, given up (permanent), or skipped. */
export type DeliveryStatus = "pending" | "delivered" | "failed" | "skipped"

/**
 * One signed webhook delivery, written to the outbox in the same transaction as the decision change it
 * reports. `id` is the receiver's dedupe key (`webhook-id`, the body's `id`); `payload` is the
 * raw body, fixed at the change; the signature is made afresh at every attempt.
 */
export interface WebhookDelivery {
  readonly id: string
  readonly organizationId: string
  readonly webhookId: string
  readonly decisionId: string
  readonly eventType: string
  readonly payload: string
  readonly status: DeliveryStatus
  readonly attempts: number
  /** When the next attempt is due; while a worker holds it, the end of its lease. */
  readonly nextAttemptAt: string
  readonly createdAt: string
  readonly lastError?: string
  readonly lastStatusCode?: number
  readonly completedAt?: string
}

/** What one attempt came to, as the outbox records it. */
export type DeliveryResult =
  | { readonly _tag: "Delivered"; readonly at: string; readonly statusCode: number }
  | {
      readonly _tag: "Retry"
      readonly nextAttemptAt: string
      readonly error: string
      readonly statusCode?: number | undefined
    }
  | {
      readonly _tag: "GiveUp"
      readonly status: "failed" | "skipped"
      readonly at: string
      readonly error: string
      readonly statusCode?: number | undefined
    }

/**
 * The webhook outbox. Rows are added by `DecisionStore.save` (same transaction as the change); this port
 * hands them to delivery workers. `claimDue` takes pending deliveries due at `nowIso` and holds each until
 * `leaseUntilIso`, so two workers never send one at the same time, and a worker that dies mid-send frees it
 * when the lease passes (at-least-once). `record` counts the attempt and writes its result.
 */
export class WebhookOutbox extends Context.Service<
  WebhookOutbox,
  {
    readonly claimDue: (
      nowIso: string,
      leaseUntilIso: string,
      limit: number
    ) => Effect.Effect<ReadonlyArray<WebhookDelivery>>
    readonly record: (id: string, result: DeliveryResult) => Effect.Effect<void>
    /** One organization's deliveries, newest first, optionally of one endpoint. */
    readonly list: (
      organizationId: string,
      options: { readonly webhookId?: string | undefined; readonly limit: number }
    ) => Effect.Effect<ReadonlyArray<WebhookDelivery>>
  }
>()("core/decisions/WebhookOutbox") {}
