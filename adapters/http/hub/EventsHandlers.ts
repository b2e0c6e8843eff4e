import { Effect, Layer } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import type { EventCatalogEntry } from "../../../core/hub/CatalogStore.ts"
import { Directory } from "../../../core/hub/Directory.ts"
import { DeliveryStore } from "../../../core/hub/Deliveries.ts"
import { PersonNotifications } from "../../../core/hub/PersonNotifications.ts"
import { EventCatalog } from "../../../core/hub/EventCatalog.ts"
import { EventIngest, type IngestOutcome } from "../../../core/hub/EventIngest.ts"
import { EventHeaderNames } from "../../../core/hub/Events.ts"
import type { Notification } from "../../../core/hub/NotificationStore.ts"
import { NotificationStore } from "../../../core/hub/NotificationStore.ts"
import { NotFound } from "../../../core/kernel/Errors.ts"
import { answerHub } from "../ErrorResponse.ts"
import { EventsApi } from "./EventsApi.ts"
import { isolatedHandlers } from "../ServiceHttp.ts"

const publicEntry = (entry: EventCatalogEntry) => ({
  type: entry.type,
  producer: entry.producer,
  isNotification: entry.isNotification,
  dataSchema: entry.dataSchema
})

const feedEntry = (n: Notification) => ({
  id: n.id,
  service: n.service,
  eventId: n.eventId,
  type: n.type,
  title: n.title,
  body: n.body,
  url: n.url,
  category: n.category,
  createdAt: n.createdAt,
  readAt: n.readAt
})

/** The answer to a delivery, written as it is (its shape is IngestAnswer's). */
const ingestAnswer = (outcome: IngestOutcome) =>
  HttpServerResponse.jsonUnsafe(
    { data: { id: outcome.id, status: outcome.status } },
    { status: outcome.status === "accepted" ? 202 : 200 }
  )

/**
 * `POST /api/webhooks/events`: the raw body and the four headers (as declared) go to the use case as they
 * arrived. Built on its own (`isolatedHandlers`): a delivery's context is the server's, nothing copied in.
 */
export const EventIngestHandlers = isolatedHandlers(
  Effect.map(Effect.service(EventIngest), (ingest) =>
    HttpApiBuilder.group(EventsApi, "eventIngest", (handlers) =>
      handlers.handle("deliver", ({ headers, payload }) =>
        answerHub(
          Effect.map(
            ingest.ingest({
              headers: {
                signature: headers[EventHeaderNames.signature],
                timestamp: headers[EventHeaderNames.timestamp],
                eventId: headers[EventHeaderNames.eventId],
                delivery: headers[EventHeaderNames.delivery]
              },
              body: payload
            }),
            ingestAnswer
          )
        )
      )
    )
  )
)

/** `GET /api/v1/event-catalog`: producers are those of the types listed. */
export const EventCatalogHandlers = HttpApiBuilder.group(EventsApi, "eventCatalog", (handlers) =>
  Effect.gen(function* () {
    const catalog = yield* EventCatalog
    return handlers.handle("catalog", ({ query }) =>
      Effect.map(catalog.list(query.service), (entries) => ({
        data: {
          contractVersion: "v1" as const,
          producers: [...new Set(entries.map((entry) => entry.producer))].sort(),
          types: entries.map(publicEntry)
        }
      }))
    )
  })
)

const feedLimitDefault = 50

export const EventsAdminHandlers = HttpApiBuilder.group(EventsApi, "eventsAdmin", (handlers) =>
  Effect.gen(function* () {
    const catalog = yield* EventCatalog
    const directory = yield* Directory
    const notifications = yield* NotificationStore
    const deliveries = yield* DeliveryStore
    const person = yield* PersonNotifications

    const userNamed = (email: string) =>
      Effect.flatMap(directory.findUserByEmail(email), (user) =>
        user === undefined ? Effect.fail(new NotFound({})) : Effect.succeed(user)
      )

    return handlers
      .handle("addCatalogType", ({ payload }) =>
        answerHub(
          Effect.map(catalog.add(payload), (entry) =>
            HttpServerResponse.jsonUnsafe({ data: publicEntry(entry) }, { status: 201 })
          )
        )
      )
      .handle("userNotifications", ({ params, query }) =>
        answerHub(
          Effect.gen(function* () {
            const user = yield* userNamed(params.email)
            const feed = yield* notifications.feed(user.id, query.limit ?? feedLimitDefault)
            const log = yield* deliveries.forUser(user.id, (query.limit ?? feedLimitDefault) * 4)
            return {
              data: {
                email: user.email,
                notifications: feed.map(feedEntry),
                deliveries: log.map(({ userId: _userId, ...delivery }) => delivery)
              }
            }
          })
        )
      )
      .handle("userPreferences", ({ params, payload }) =>
        answerHub(
          Effect.gen(function* () {
            const user = yield* userNamed(params.email)
            const preferences = yield* person.updatePreferences(user.id, payload)
            return { data: { email: user.email, preferences } }
          })
        )
      )
  })
)

/** The three groups' handlers, for `serviceRoutes` (the operator group needs HubAdminAuth provided). */
export const EventsHandlers = Layer.mergeAll(EventIngestHandlers, EventCatalogHandlers, EventsAdminHandlers)
