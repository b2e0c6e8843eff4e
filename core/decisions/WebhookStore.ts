import { Context, Effect, Schema } from "effect"

/** The signing secret is shown once, on creation, and kept sealed. */
export const WebhookEndpoint = Schema.Struct({
  id: Schema.String,
  url: Schema.String,
  createdAt: Schema.String,
  disabledAt: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "WebhookEndpoint" })
export type WebhookEndpoint = typeof WebhookEndpoint.Type

export interface StoredWebhook extends WebhookEndpoint {
  readonly organizationId: string
  /** The signing secret, sealed (core/auth/SecretBox.ts). */
  readonly sealedSecret: string
}

/** Webhook endpoints per organization. `disable` is idempotent and keeps the first `disabledAt`. */
export class WebhookStore extends Context.Service<
  WebhookStore,
  {
    readonly create: (webhook: StoredWebhook) => Effect.Effect<void>
    readonly list: (organizationId: string) => Effect.Effect<ReadonlyArray<StoredWebhook>>
    readonly get: (organizationId: string, id: string) => Effect.Effect<StoredWebhook | undefined>
    readonly disable: (organizationId: string, id: string, at: string) => Effect.Effect<StoredWebhook | undefined>
  }
>()("core/decisions/WebhookStore") {}
