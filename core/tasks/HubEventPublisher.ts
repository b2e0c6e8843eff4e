import { Context, type Effect, Schema } from "effect"
import type { TaskEvent } from "./EventOutbox.ts"

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
 * Delivers one event to the hub's `POST /api/webhooks/events` (document 1), signed afresh for this attempt
 * (AUTH-2) with a delivery id of its own. What the answer means is decided by core/tasks/EventRelay.ts.
 */
export class HubEventPublisher extends Context.Service<
  HubEventPublisher,
  { readonly publish: (event: TaskEvent) => Effect.Effect<HubAnswer, HubPublishFailed> }
>()("core/tasks/HubEventPublisher") {}
