import { Clock, Context, Effect, Layer, Result, Schema } from "effect"
import { createHash } from "node:crypto"
import { open, seal } from "../auth/SecretBox.ts"
import { Forbidden, NotConfigured, NotFound, ValidationError } from "../kernel/Errors.ts"
import { bodyIssue } from "../kernel/FieldIssue.ts"
import { isoAt } from "../kernel/Timestamp.ts"
import { checkWebhookUrl } from "../kernel/WebhookUrl.ts"
import { Directory } from "./Directory.ts"

/** An organization's chat webhook: the URL sealed with the hub's secrets key, its host kept in the clear. */
export interface OrgChatWebhook {
  readonly orgId: string
  readonly sealedUrl: string
  readonly host: string
  readonly updatedAt: string
}

/** The organizations' chat webhooks. Infrastructure failures are defects. */
export class OrgChatWebhookStore extends Context.Service<
  OrgChatWebhookStore,
  {
    readonly find: (orgId: string) => Effect.Effect<OrgChatWebhook | undefined>
    /** The webhooks of those of these organizations that have one, in one read. */
    readonly findAll: (orgIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<OrgChatWebhook>>
    readonly save: (webhook: OrgChatWebhook) => Effect.Effect<void>
    /** False when the organization had none. */
    readonly remove: (orgId: string) => Effect.Effect<boolean>
  }
>()("core/hub/OrgChatWebhookStore") {}

/** A request to set the organization's webhook. */
export const OrgChatWebhookBody = Schema.Struct({
  url: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(2048))
}).annotate({ identifier: "OrgChatWebhookUpdate" })
export type OrgChatWebhookBody = typeof OrgChatWebhookBody.Type

/** What an admin sees of the webhook: whether one is set and its host, never the URL (it is a credential). */
export interface OrgChatWebhookView {
  readonly set: boolean
  readonly host: string | null
}

const view = (webhook: OrgChatWebhook | undefined): OrgChatWebhookView => ({
  set: webhook !== undefined,
  host: webhook?.host ?? null
})

/**
 * The delivery id of a notification in the organization's channel. Each person gets their own notification
 * of one happening (a decision waiting for a role is one notification per holder), but the channel should
 * hear of it once: the id names the organization and what the notification says (producer, moment, title,
 * body, link), so the holders' notifications all queue the same row, and a repeat adds nothing.
 */
export const orgChatDeliveryId = (
  orgId: string,
  happening: {
    readonly service: string
    readonly occurredAt: string
    readonly title: string
    readonly body: string | null
    readonly url: string | null
  }
): string => {
  const digest = createHash("sha256")
    .update(
      JSON.stringify([happening.service, happening.occurredAt, happening.title, happening.body ?? "", happening.url])
    )
    .digest("base64url")
    .slice(0, 32)
  return `org:${orgId}/chat/${digest}`
}

export const orgChatTarget = (orgId: string) => `org:${orgId}`
/** The organization a chat delivery's target names, if it names one. */
export const orgOfChatTarget = (target: string): string | undefined =>
  target.startsWith("org:") ? target.slice("org:".length) : undefined

export interface OrgChatWebhooksConfig {
  /** Seals the webhook URLs; without it none can be saved (fails closed). */
  readonly secretsKey: string | undefined
  /** Outside production, http to loopback is allowed (development, tests). */
  readonly allowLoopbackHttp: boolean
}

const adminRoles = new Set(["OWNER", "ADMIN"])

/**
 * An organization's own chat channel, set by its owners and admins: every notification for one of its
 * people (about that organization) is also posted there, once. Someone outside the organization gets the
 * same NotFound as for a missing one; a member who is not an admin gets Forbidden.
 */
export class OrgChatWebhooks extends Context.Service<
  OrgChatWebhooks,
  {
    readonly view: (userId: string, orgId: string) => Effect.Effect<OrgChatWebhookView, NotFound | Forbidden>
    readonly set: (
      userId: string,
      orgId: string,
      body: OrgChatWebhookBody
    ) => Effect.Effect<OrgChatWebhookView, NotFound | Forbidden | ValidationError | NotConfigured>
    readonly remove: (userId: string, orgId: string) => Effect.Effect<void, NotFound | Forbidden>
    /** The webhook's URL, opened, for sending; undefined when none is set or it cannot be opened. */
    readonly urlOf: (orgId: string) => Effect.Effect<string | undefined>
  }
>()("core/hub/OrgChatWebhooks") {
  static readonly layer = (config: OrgChatWebhooksConfig) =>
    Layer.effect(
      OrgChatWebhooks,
      Effect.gen(function* () {
        const store = yield* OrgChatWebhookStore
        const directory = yield* Directory

        const asAdmin = Effect.fn("OrgChatWebhooks.asAdmin")(function* (userId: string, orgId: string) {
          const memberships = yield* directory.membershipsOf(userId)
          const mine = memberships.find((m) => m.org.id === orgId && m.org.deletedAt === null)
          if (mine === undefined) return yield* new NotFound({ message: "No such organization." })
          if (!adminRoles.has(mine.membership.role)) {
            return yield* new Forbidden({ message: "Only the organization's owners and admins can do this." })
          }
        })

        return OrgChatWebhooks.of({
          view: Effect.fn("OrgChatWebhooks.view")(function* (userId, orgId) {
            yield* asAdmin(userId, orgId)
            return view(yield* store.find(orgId))
          }),
          set: Effect.fn("OrgChatWebhooks.set")(function* (userId, orgId, body) {
            yield* asAdmin(userId, orgId)
            const checked = checkWebhookUrl(body.url, { allowLoopbackHttp: config.allowLoopbackHttp })
            if (Result.isFailure(checked)) {
              return yield* new ValidationError({
                message: `url ${checked.failure}.`,
                details: [bodyIssue("url", checked.failure)]
              })
            }
            if (config.secretsKey === undefined) {
              return yield* new NotConfigured({
                message: "This server cannot keep secrets: its secrets key is not set."
              })
            }
            const webhook: OrgChatWebhook = {
              orgId,
              sealedUrl: seal(config.secretsKey, checked.success),
              host: new URL(checked.success).host,
              updatedAt: isoAt(yield* Clock.currentTimeMillis)
            }
            yield* store.save(webhook)
            return view(webhook)
          }),
          remove: Effect.fn("OrgChatWebhooks.remove")(function* (userId, orgId) {
            yield* asAdmin(userId, orgId)
            yield* store.remove(orgId)
          }),
          urlOf: (orgId) =>
            Effect.map(store.find(orgId), (webhook) =>
              webhook === undefined || config.secretsKey === undefined
                ? undefined
                : open(config.secretsKey, webhook.sealedUrl)
            )
        })
      })
    )
}
