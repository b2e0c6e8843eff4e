import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { OrgChatWebhookBody } from "../../../core/hub/OrgChatWebhooks.ts"
import { Data } from "../../../core/kernel/index.ts"
import { ErrorResponses as E } from "../ErrorSchemas.ts"
import { reportAllIssues } from "../ParseOptions.ts"
import { HubPersonAuth } from "./PersonAuth.ts"

const OrgId = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(128))

const OrgChatWebhookSchema = Schema.Struct({
  set: Schema.Boolean,
  host: Schema.NullOr(Schema.String.annotate({ description: "The webhook's host; the URL itself is never shown" }))
}).annotate({ identifier: "OrgChatWebhook" })

const Envelope = Data(OrgChatWebhookSchema).annotate({ identifier: "OrgChatWebhookEnvelope" })

/**
 * An organization's own channels, set by its owners and admins with their session: the organization's chat
 * webhook. Someone outside the organization gets 404, as for one that does not exist; a member who is not an
 * owner or admin gets 403.
 */
export class OrgChannelsGroup extends HttpApiGroup.make("orgChannels")
  .add(
    HttpApiEndpoint.get("chatWebhook", "/api/v1/orgs/:orgId/chat-webhook", {
      params: { orgId: OrgId },
      success: Envelope,
      error: [E.badRequest, E.unauthorized, E.forbidden, E.notFound]
    }).annotate(OpenApi.Description, "Whether the organization's chat webhook is set, and its host."),
    HttpApiEndpoint.put("setChatWebhook", "/api/v1/orgs/:orgId/chat-webhook", {
      params: { orgId: OrgId },
      payload: OrgChatWebhookBody,
      success: Envelope,
      error: [E.badRequest, E.unauthorized, E.forbidden, E.notFound, E.notConfigured]
    }).annotate(
      OpenApi.Description,
      "Sets the organization's Slack-compatible incoming webhook (https, never a private address): every " +
        "notification for the organization's people about it is also posted there, once. Replaces one set before."
    ),
    HttpApiEndpoint.delete("removeChatWebhook", "/api/v1/orgs/:orgId/chat-webhook", {
      params: { orgId: OrgId },
      success: HttpApiSchema.NoContent,
      error: [E.badRequest, E.unauthorized, E.forbidden, E.notFound]
    }).annotate(OpenApi.Description, "Removes the organization's chat webhook (204, also when none was set).")
  )
  .middleware(HubPersonAuth)
  .annotate(HttpApi.ParseOptions, reportAllIssues)
  .annotate(HttpApi.HeadersParseOptions, {})
  .annotateMerge(
    OpenApi.annotations({ title: "Organization channels", description: "An organization's own notification channels" })
  ) {}

/** The group in an API with the hub's id: what its handlers are built against. */
export const OrgChannelsApi = HttpApi.make("hub").add(OrgChannelsGroup)
