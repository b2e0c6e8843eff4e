import { Clock, Context, Effect, Layer, Redacted, Result } from "effect"
import { randomBytes } from "node:crypto"
import { seal } from "../auth/SecretBox.ts"
import { NotConfigured, NotFound, ValidationError, type Forbidden } from "../kernel/Errors.ts"
import { bodyIssue } from "../kernel/FieldIssue.ts"
import { IdGenerator } from "../kernel/Ids.ts"
import { isoAt } from "../kernel/Timestamp.ts"
import { requireAdmin, type CallerIdentity, type WorkspaceUser } from "./Decisions.ts"
import { checkWebhookUrl } from "../kernel/WebhookUrl.ts"
import { WebhookStore, type StoredWebhook, type WebhookEndpoint } from "./WebhookStore.ts"

export interface WebhooksConfig {
  /** Seals signing secrets at rest. Unset (production without the key): registration is NotConfigured. */
  readonly secretsKey: Redacted.Redacted<string> | undefined
  /** Outside production, http to loopback is allowed (local development and tests). */
  readonly allowLoopbackHttp: boolean
}

const show = ({ organizationId: _org, sealedSecret: _secret, ...endpoint }: StoredWebhook): WebhookEndpoint => endpoint

/**
 * Signing secrets follow Standard Webhooks: `whsec_` and 32 random bytes in base64, so receivers can use
 * off-the-shelf verifiers; the same string keys the `X-Decisions-Signature` HMAC.
 */
export const newSigningSecret = (): string => `whsec_${randomBytes(32).toString("base64")}`

/** Webhook endpoints: callers register them; org admins list and disable them. */
export class Webhooks extends Context.Service<
  Webhooks,
  {
    /** Registers an endpoint for the caller's organization; its signing secret is answered this once. */
    readonly register: (
      caller: CallerIdentity,
      url: string
    ) => Effect.Effect<RegisteredWebhook, NotConfigured | ValidationError>
    /** The organization's endpoints. Admins only. */
    readonly list: (user: WorkspaceUser) => Effect.Effect<ReadonlyArray<WebhookEndpoint>, Forbidden>
    /** Stops deliveries to an endpoint. Admins only. */
    readonly disable: (user: WorkspaceUser, id: string) => Effect.Effect<WebhookEndpoint, Forbidden | NotFound>
  }
>()("core/decisions/Webhooks") {
  static readonly layer = (config: WebhooksConfig): Layer.Layer<Webhooks, never, WebhookStore | IdGenerator> =>
    Layer.effect(Webhooks, make(config))
}

/** A new endpoint and its signing secret, shown once. */
export interface RegisteredWebhook {
  readonly webhook: WebhookEndpoint
  readonly secret: string
}

const make = (config: WebhooksConfig) =>
  Effect.gen(function* () {
    const store = yield* WebhookStore
    const ids = yield* IdGenerator

    const register = Effect.fn("Webhooks.register")(function* (caller: CallerIdentity, url: string) {
      if (config.secretsKey === undefined) {
        return yield* new NotConfigured({ message: "Webhooks are not configured on this service yet." })
      }
      const checked = checkWebhookUrl(url, { allowLoopbackHttp: config.allowLoopbackHttp })
      if (Result.isFailure(checked)) {
        return yield* new ValidationError({
          message: "The webhook URL is not allowed.",
          details: [bodyIssue("url", checked.failure)]
        })
      }
      const secret = newSigningSecret()
      const webhook: StoredWebhook = {
        id: yield* ids.next,
        organizationId: caller.organizationId,
        url: checked.success,
        sealedSecret: seal(Redacted.value(config.secretsKey), secret),
        createdAt: isoAt(yield* Clock.currentTimeMillis)
      }
      yield* store.create(webhook)
      return { webhook: show(webhook), secret }
    })

    const list = Effect.fn("Webhooks.list")(function* (user: WorkspaceUser) {
      yield* requireAdmin(user)
      return (yield* store.list(user.organizationId)).map(show)
    })

    const disable = Effect.fn("Webhooks.disable")(function* (user: WorkspaceUser, id: string) {
      yield* requireAdmin(user)
      const webhook = yield* store.disable(user.organizationId, id, isoAt(yield* Clock.currentTimeMillis))
      if (webhook === undefined) return yield* new NotFound({ message: "No such webhook." })
      return show(webhook)
    })

    return Webhooks.of({ register, list, disable })
  })
