import { Clock, Context, Effect, Layer, Random, Redacted } from "effect"
import { open } from "../auth/SecretBox.ts"
import { NotFound, type Forbidden } from "../kernel/Errors.ts"
import { isoAt } from "../kernel/Timestamp.ts"
import { requireAdmin, type WorkspaceUser } from "./Decisions.ts"
import { attemptOutcome, defaultRetrySchedule, signedHeaders } from "./WebhookDelivery.ts"
import { WebhookOutbox, type DeliveryResult, type WebhookDelivery } from "./WebhookOutbox.ts"
import { WebhookSender } from "./WebhookSender.ts"
import { WebhookStore } from "./WebhookStore.ts"

export interface WebhookDeliveriesConfig {
  /** Opens the endpoints' sealed signing secrets. */
  readonly secretsKey: Redacted.Redacted<string> | undefined
  /** Seconds before each retry (`WEBHOOK_RETRY_SCHEDULE`). */
  readonly retrySchedule?: ReadonlyArray<number> | undefined
  /** Per attempt. Default 10 s. */
  readonly timeoutMs?: number | undefined
  /** Deliveries sent at once. Default 8. */
  readonly concurrency?: number | undefined
}

/** A delivery as an admin sees it: what was sent and how it went, never the secret. */
export type DeliveryView = Omit<WebhookDelivery, "organizationId" | "payload">

/**
 * Sends the outbox: claims due deliveries with a lease, signs each afresh, posts it through the
 * WebhookSender port, and records the outcome (core/decisions/WebhookDelivery.ts `attemptOutcome`). A
 * disabled or deleted endpoint's deliveries are skipped. A delivery is sent at least once: a worker that
 * dies mid-send leaves it to be claimed again when its lease passes; receivers dedupe on its id.
 */
export class WebhookDeliveries extends Context.Service<
  WebhookDeliveries,
  {
    /** Sends every delivery due now (up to `batch`, 50 by default); answers how many were delivered. */
    readonly deliverDue: (batch?: number | undefined) => Effect.Effect<number>
    /** An endpoint's recent deliveries, newest first. Admins only. */
    readonly list: (
      user: WorkspaceUser,
      webhookId: string,
      limit: number
    ) => Effect.Effect<ReadonlyArray<DeliveryView>, Forbidden | NotFound>
  }
>()("core/decisions/WebhookDeliveries") {
  static readonly layer = (
    config: WebhookDeliveriesConfig
  ): Layer.Layer<WebhookDeliveries, never, WebhookOutbox | WebhookStore | WebhookSender> =>
    Layer.effect(WebhookDeliveries, make(config))
}

const make = (config: WebhookDeliveriesConfig) =>
  Effect.gen(function* () {
    const outbox = yield* WebhookOutbox
    const endpoints = yield* WebhookStore
    const sender = yield* WebhookSender
    const schedule = config.retrySchedule ?? defaultRetrySchedule
    const timeoutMs = config.timeoutMs ?? 10_000
    const concurrency = config.concurrency ?? 8

    const deliverOne = Effect.fnUntraced(function* (delivery: WebhookDelivery) {
      const endpoint = yield* endpoints.get(delivery.organizationId, delivery.webhookId)
      const secret =
        endpoint === undefined || config.secretsKey === undefined
          ? undefined
          : open(Redacted.value(config.secretsKey), endpoint.sealedSecret)
      const now = yield* Clock.currentTimeMillis
      let result: DeliveryResult
      if (endpoint === undefined || endpoint.disabledAt !== undefined) {
        result = { _tag: "GiveUp", status: "skipped", at: isoAt(now), error: "The endpoint is disabled." }
      } else if (secret === undefined) {
        result = { _tag: "GiveUp", status: "failed", at: isoAt(now), error: "The endpoint's secret cannot be read." }
      } else {
        const headers = signedHeaders({
          secret,
          deliveryId: delivery.id,
          body: delivery.payload,
          timestampSeconds: Math.floor(now / 1000)
        })
        const answer = yield* Effect.result(
          sender.send({ url: endpoint.url, headers, body: delivery.payload, timeoutMs })
        )
        result = attemptOutcome(answer, {
          attemptsBefore: delivery.attempts,
          schedule,
          nowMs: yield* Clock.currentTimeMillis,
          jitter: yield* Random.next
        })
      }
      yield* outbox.record(delivery.id, result)
      return result._tag === "Delivered"
    })

    /** Sends every delivery due now (up to `batch`); answers how many were delivered. */
    const deliverDue = Effect.fn("WebhookDeliveries.deliverDue")(function* (batch: number = 50) {
      const now = yield* Clock.currentTimeMillis
      // Longer than the whole batch can take, so a delivery is claimed again only when its worker is gone.
      const leaseMs = timeoutMs * Math.ceil(batch / concurrency) + 5_000
      const claimed = yield* outbox.claimDue(isoAt(now), isoAt(now + leaseMs), batch)
      const delivered = yield* Effect.forEach(claimed, deliverOne, { concurrency })
      return delivered.filter(Boolean).length
    })

    /** An endpoint's recent deliveries, newest first (org admins). */
    const list = Effect.fn("WebhookDeliveries.list")(function* (user: WorkspaceUser, webhookId: string, limit: number) {
      yield* requireAdmin(user)
      if ((yield* endpoints.get(user.organizationId, webhookId)) === undefined) {
        return yield* new NotFound({ message: "No such webhook." })
      }
      const rows = yield* outbox.list(user.organizationId, { webhookId, limit })
      return rows.map(({ organizationId: _org, payload: _payload, ...view }): DeliveryView => view)
    })

    return WebhookDeliveries.of({ deliverDue, list })
  })
