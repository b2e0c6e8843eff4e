import { IdempotencyKeyOptional } from "../ContractHeaders.ts"
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { DeliveryChannels, DeliveryStatuses } from "../../../core/hub/Deliveries.ts"
import { ChannelNames, EmailModes } from "../../../core/hub/Directory.ts"
import { PreferencesPatch } from "../../../core/hub/PersonNotifications.ts"
import { Email } from "../../../core/kernel/Email.ts"
import { Hub } from "../../../core/kernel/Limits.ts"
import { MaxBodyBytes } from "../BodyLimit.ts"
import { ErrorResponses as E } from "../ErrorSchemas.ts"
import { reportAllIssues } from "../ParseOptions.ts"
import { HubAdminAuth } from "./AdminAuth.ts"
import { IdempotencyOptional } from "../IdempotencyMiddleware.ts"

const envelope = <S extends Schema.Top>(identifier: string, data: S) => Schema.Struct({ data }).annotate({ identifier })
const Timestamp = Schema.String.annotate({ format: "date-time" })

export const IngestAnswer = envelope(
  "EventIngestEnvelope",
  Schema.Struct({ id: Schema.String, status: Schema.Literals(["accepted", "duplicate"]) })
)

/** Producers check their `data` before they send. */
export const EventCatalogEntrySchema = Schema.Struct({
  type: Schema.String,
  producer: Schema.String,
  isNotification: Schema.Boolean,
  dataSchema: Schema.Record(Schema.String, Schema.Unknown)
}).annotate({ identifier: "EventCatalogEntry" })

export const EventCatalogAnswer = envelope(
  "EventCatalogEnvelope",
  Schema.Struct({
    contractVersion: Schema.Literal("v1"),
    producers: Schema.Array(Schema.String),
    types: Schema.Array(EventCatalogEntrySchema)
  })
)

export const NotificationSchema = Schema.Struct({
  id: Schema.String,
  service: Schema.String,
  eventId: Schema.String,
  type: Schema.String,
  title: Schema.String,
  body: Schema.NullOr(Schema.String),
  url: Schema.NullOr(Schema.String),
  category: Schema.NullOr(Schema.String),
  createdAt: Timestamp,
  readAt: Schema.NullOr(Timestamp)
}).annotate({ identifier: "Notification" })

export const DeliverySchema = Schema.Struct({
  id: Schema.String,
  notificationId: Schema.String,
  channel: Schema.Literals(DeliveryChannels),
  target: Schema.String,
  status: Schema.Literals(DeliveryStatuses),
  attempts: Schema.Number,
  nextAttemptAt: Timestamp,
  lastError: Schema.NullOr(Schema.String),
  createdAt: Timestamp,
  sentAt: Schema.NullOr(Timestamp)
}).annotate({
  identifier: "NotificationDelivery",
  description:
    "One channel's delivery of one notification. status: pending (waiting for nextAttemptAt), sending, sent, " +
    "failed (refused, or out of retries), cancelled (nothing to send to any more), interrupted (the server " +
    "stopped while sending; never sent again, so it may or may not have arrived)."
})

export const PreferencesSchema = Schema.Struct({
  serviceVisible: Schema.Record(Schema.String, Schema.Boolean),
  channels: Schema.Array(Schema.Literals(ChannelNames)),
  emailMode: Schema.Literals(EmailModes),
  chatWebhook: Schema.Boolean.annotate({ description: "Whether a chat webhook is set (its URL is never shown)." })
}).annotate({ identifier: "UserPreferences" })

export const PreferencesUpdate = PreferencesPatch

export const CatalogAddBody = Schema.Struct({
  type: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200)),
  producer: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(64)),
  isNotification: Schema.optionalKey(Schema.Boolean),
  dataSchema: Schema.Record(Schema.String, Schema.Unknown)
}).annotate({ identifier: "EventCatalogEntryCreate" })

const optionalHeader = Schema.optionalKey(Schema.String)

/** A producer delivers one signed event. */
export class EventIngestGroup extends HttpApiGroup.make("eventIngest")
  .add(
    HttpApiEndpoint.post("deliver", "/api/webhooks/events", {
      // Optional in the schema so that a missing signature is the use case's 401, not a 400.
      headers: {
        "x-platform-signature": optionalHeader,
        "x-platform-timestamp": optionalHeader,
        "x-platform-event-id": optionalHeader,
        "x-platform-delivery": optionalHeader
      },
      // The raw bytes: AUTH-2 signs `<timestamp>.<raw body>`, so the body is verified before it is decoded.
      payload: Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({ contentType: "application/json" })).annotate({
        description: "An InboundEvent as JSON, signed with AUTH-2; at most 64 KB."
      }),
      success: [IngestAnswer.pipe(HttpApiSchema.status(202)), IngestAnswer],
      error: [E.badRequest, E.unauthorized, E.forbidden, E.payloadTooLarge, E.rateLimited]
    })
      .annotate(MaxBodyBytes, Hub.eventBodyBytes)
      .annotate(
        OpenApi.Description,
        "202 accepted (handled after the acknowledgement), 200 duplicate (stop retrying). 400 and 403 are " +
          "permanent; 401 bad or stale signature; 413 over 64 KB; 429 per-service quota (Retry-After)."
      )
  )
  .annotate(HttpApi.ParseOptions, reportAllIssues)
  .annotate(HttpApi.HeadersParseOptions, {})
  .annotateMerge(OpenApi.annotations({ title: "Event delivery", description: "Signed events from services" })) {}

/** Public, no credential. */
export class EventCatalogGroup extends HttpApiGroup.make("eventCatalog")
  .add(
    HttpApiEndpoint.get("catalog", "/api/v1/event-catalog", {
      query: { service: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(64))) },
      success: EventCatalogAnswer,
      error: [E.badRequest]
    })
  )
  .annotate(HttpApi.ParseOptions, reportAllIssues)
  .annotateMerge(OpenApi.annotations({ title: "Event catalog", description: "The event-type registry" })) {}

/** The operator plane for events and notifications (`Authorization: Bearer <HUB_ADMIN_KEY>`). */
export class EventsAdminGroup extends HttpApiGroup.make("eventsAdmin")
  .add(
    HttpApiEndpoint.post("addCatalogType", "/api/v1/admin/event-catalog", {
      headers: IdempotencyKeyOptional,
      payload: CatalogAddBody,
      success: envelope("EventCatalogEntryEnvelope", EventCatalogEntrySchema).pipe(HttpApiSchema.status(201)),
      error: [E.badRequest, E.unauthorized, E.notConfigured]
    })
      .middleware(IdempotencyOptional)
      .annotate(
        OpenApi.Description,
        "Adds or replaces a type. 400 for a bad type, an unregistered producer, or a dataSchema that does not compile."
      ),
    HttpApiEndpoint.get("userNotifications", "/api/v1/admin/users/:email/notifications", {
      params: { email: Email },
      query: {
        limit: Schema.optionalKey(
          Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 200 }))
        )
      },
      success: envelope(
        "UserNotificationsEnvelope",
        Schema.Struct({
          email: Schema.String,
          notifications: Schema.Array(NotificationSchema),
          deliveries: Schema.Array(DeliverySchema)
        })
      ),
      error: [E.badRequest, E.unauthorized, E.notFound, E.notConfigured]
    }).annotate(
      OpenApi.Description,
      "The user's unified feed and the delivery log of their channels (email, chat, push), newest first: " +
        "each delivery's status, attempts, next attempt and last error."
    ),
    HttpApiEndpoint.put("userPreferences", "/api/v1/admin/users/:email/preferences", {
      params: { email: Email },
      headers: IdempotencyKeyOptional,
      payload: PreferencesUpdate,
      success: envelope(
        "UserPreferencesEnvelope",
        Schema.Struct({ email: Schema.String, preferences: PreferencesSchema })
      ),
      error: [E.badRequest, E.unauthorized, E.notFound, E.notConfigured]
    })
      .middleware(IdempotencyOptional)
      .annotate(OpenApi.Description, "Changes the named fields of the user's preferences; the others are kept.")
  )
  .middleware(HubAdminAuth)
  .annotate(HttpApi.ParseOptions, reportAllIssues)
  .annotate(HttpApi.HeadersParseOptions, {})
  .annotateMerge(OpenApi.annotations({ title: "Operator: events", description: "Catalog, feeds and preferences" })) {}

/** A hub-id API with just these groups: what their handlers are built against (and tests serve). */
export const EventsApi = HttpApi.make("hub").add(EventIngestGroup).add(EventCatalogGroup).add(EventsAdminGroup)
