import { Context, Effect, Schema } from "effect"

/** An attempt that got no HTTP answer: it timed out, could not connect, or the address was not allowed. */
export class WebhookSendFailed extends Schema.TaggedError<WebhookSendFailed>()("WebhookSendFailed", {
  reason: Schema.Literals(["timeout", "network", "blocked_address"]),
  message: Schema.String
}) {}

export interface WebhookRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly timeoutMs: number
}

export interface WebhookAnswer {
  readonly status: number
  /** The `Retry-After` header as received, if any. */
  readonly retryAfter?: string | undefined
}

/**
 * POSTs one webhook. The adapter checks, at every attempt, that the host resolves to an address the
 * delivery may reach (never a private or loopback network in production: DNS can point anywhere).
 */
export class WebhookSender extends Context.Service<
  WebhookSender,
  { readonly send: (request: WebhookRequest) => Effect.Effect<WebhookAnswer, WebhookSendFailed> }
>()("core/decisions/WebhookSender") {}
