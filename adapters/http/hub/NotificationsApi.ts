import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { ChannelNames, EmailModes } from "../../../core/hub/Directory.ts"
import { feedLimitMax, PreferencesPatch, PushSubscriptionBody } from "../../../core/hub/PersonNotifications.ts"
import { Data } from "../../../core/kernel/index.ts"
import { ErrorResponses as E } from "../ErrorSchemas.ts"
import { reportAllIssues } from "../ParseOptions.ts"
import { HubPersonAuth } from "./PersonAuth.ts"
import { FeedPageSchema, Timestamp } from "./Schemas.ts"

export const MyPreferencesSchema = Schema.Struct({
  channels: Schema.Array(Schema.Literals(ChannelNames)),
  emailMode: Schema.Literals(EmailModes),
  chatWebhook: Schema.Boolean.annotate({ description: "Whether a chat webhook is set (its URL is never shown)." }),
  serviceVisible: Schema.Record(Schema.String, Schema.Boolean)
}).annotate({ identifier: "NotificationPreferences" })

const NotificationId = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(64))

/**
 * The signed-in person's own notifications (docs/notifications.md): the feed behind the bell, read marks,
 * channel preferences, and the browsers registered for web push. Cookie `hub_session` (HubPersonAuth).
 */
export class MyNotificationsGroup extends HttpApiGroup.make("myNotifications")
  .add(
    HttpApiEndpoint.get("feed", "/api/v1/me/notifications", {
      query: {
        limit: Schema.optionalKey(
          Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: feedLimitMax }))
        ),
        cursor: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(512)))
      },
      success: Data(FeedPageSchema).annotate({ identifier: "NotificationFeedEnvelope" }),
      error: [E.badRequest, E.unauthorized]
    }).annotate(
      OpenApi.Description,
      "The person's feed, newest first (limit default 20, at most 100; nextCursor for the next page), without " +
        "the services they hid, and how many are unread."
    ),
    HttpApiEndpoint.post("readAll", "/api/v1/me/notifications/read-all", {
      success: Data(Schema.Struct({ read: Schema.Number })).annotate({ identifier: "NotificationsReadEnvelope" }),
      error: [E.unauthorized, E.forbidden]
    }).annotate(OpenApi.Description, "Marks every unread notification read; answers how many."),
    HttpApiEndpoint.post("read", "/api/v1/me/notifications/:id/read", {
      params: { id: NotificationId },
      success: Data(Schema.Struct({ id: Schema.String, readAt: Timestamp })).annotate({
        identifier: "NotificationReadEnvelope"
      }),
      error: [E.badRequest, E.unauthorized, E.forbidden, E.notFound]
    }).annotate(
      OpenApi.Description,
      "Marks one of the person's notifications read (again: the first time stays). 404 for someone else's."
    ),
    HttpApiEndpoint.get("preferences", "/api/v1/me/preferences", {
      success: Data(MyPreferencesSchema).annotate({ identifier: "NotificationPreferencesEnvelope" }),
      error: [E.unauthorized]
    }),
    HttpApiEndpoint.patch("updatePreferences", "/api/v1/me/preferences", {
      payload: PreferencesPatch,
      success: Data(MyPreferencesSchema).annotate({ identifier: "NotificationPreferencesEnvelope" }),
      error: [E.badRequest, E.unauthorized, E.forbidden, E.notConfigured]
    }).annotate(
      OpenApi.Description,
      "Changes the fields named: channels (bell, email, chat, push), emailMode (immediate or digest), " +
        "chatWebhookUrl (a Slack-compatible incoming webhook, https; null removes it), serviceVisible. 400 names " +
        "the field."
    ),
    HttpApiEndpoint.get("pushKey", "/api/v1/me/push-key", {
      success: Data(Schema.Struct({ publicKey: Schema.String })).annotate({ identifier: "PushKeyEnvelope" }),
      error: [E.unauthorized, E.notConfigured]
    }).annotate(OpenApi.Description, "The VAPID public key to subscribe with (applicationServerKey). 501 when off."),
    HttpApiEndpoint.post("subscribePush", "/api/v1/me/push-subscriptions", {
      payload: PushSubscriptionBody,
      success: Data(Schema.Struct({ endpoint: Schema.String }))
        .annotate({ identifier: "PushSubscriptionEnvelope" })
        .pipe(HttpApiSchema.status(201)),
      error: [E.badRequest, E.unauthorized, E.forbidden, E.notConfigured]
    }).annotate(
      OpenApi.Description,
      "Registers this browser for web push (the PushSubscription's JSON); registering the same endpoint again " +
        "replaces its keys."
    ),
    HttpApiEndpoint.delete("unsubscribePush", "/api/v1/me/push-subscriptions", {
      payload: Schema.Struct({ endpoint: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(2048)) }),
      success: HttpApiSchema.NoContent,
      error: [E.badRequest, E.unauthorized, E.forbidden, E.notFound]
    }).annotate(OpenApi.Description, "Forgets one of the person's browsers. 404 when the person has no such endpoint.")
  )
  .middleware(HubPersonAuth)
  .annotate(HttpApi.ParseOptions, reportAllIssues)
  .annotate(HttpApi.HeadersParseOptions, {})
  .annotateMerge(
    OpenApi.annotations({ title: "My notifications", description: "The signed-in person's feed and channels" })
  ) {}

/** The group in an API with the hub's id: what its handlers are built against (and tests serve). */
export const MyNotificationsApi = HttpApi.make("hub").add(MyNotificationsGroup)
