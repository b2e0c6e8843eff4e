import { Context, type Effect, Schema } from "effect"
import type { ProducerEvent } from "./ProducerOutbox.ts"

/** An attempt that got no HTTP answer from the hub: it timed out or could not connect. */
export class HubPublishFailed extends Schema.TaggedError<HubPublishFailed>()("HubPublishFailed", {
  reason: Schema.Literals(["timeout", "network"]),
  message: Schema.String
}) {}

/** The hub's answer to one delivery. */
export interface HubAnswer {
  readonly status: number
  /** The `Retry-After` header as received, if any. */
  readonly retryAfter?: string | undefined
}

/**
 * Delivers one event to the hub's `POST /api/webhooks/events`, signed afresh for this attempt (AUTH-2,
 * with the producer's own signing key) with a delivery id of its own. What the answer means is decided by
 * core/events/ProducerRelay.ts.
 */
export class HubEventPublisher extends Context.Service<
  HubEventPublisher,
  { readonly publish: (event: ProducerEvent) => Effect.Effect<HubAnswer, HubPublishFailed> }
>()("core/events/HubEventPublisher") {}
