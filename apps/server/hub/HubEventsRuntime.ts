import { Effect, Layer } from "effect"
import { CatalogStoreMemory } from "../../../adapters/memory/hub/CatalogStoreMemory.ts"
import { EventStoreMemory } from "../../../adapters/memory/hub/EventStoreMemory.ts"
import { NotificationStoreMemory } from "../../../adapters/memory/hub/NotificationStoreMemory.ts"
import { OrgChatWebhookStoreMemory } from "../../../adapters/memory/hub/OrgChatWebhookStoreMemory.ts"
import { PushSubscriptionStoreMemory } from "../../../adapters/memory/hub/PushSubscriptionStoreMemory.ts"
import { CatalogStoreWithCacheSql } from "../../../adapters/sql/hub/CatalogStoreWithCacheSql.ts"
import { DeliveryStoreSql } from "../../../adapters/sql/hub/DeliveryStoreSql.ts"
import { EventStoreSql } from "../../../adapters/sql/hub/EventStoreSql.ts"
import { NotificationFilingSql } from "../../../adapters/sql/hub/NotificationFilingSql.ts"
import { NotificationStoreSql } from "../../../adapters/sql/hub/NotificationStoreSql.ts"
import { OrgChatWebhookStoreSql } from "../../../adapters/sql/hub/OrgChatWebhookStoreSql.ts"
import { PushSubscriptionStoreSql } from "../../../adapters/sql/hub/PushSubscriptionStoreSql.ts"
import { EventCatalog } from "../../../core/hub/EventCatalog.ts"
import { EventIngest } from "../../../core/hub/EventIngest.ts"
import { EventProcessor, type EventProcessorConfig } from "../../../core/hub/EventProcessor.ts"
import { DeliveryWakeup } from "../../../core/hub/DeliveryWakeup.ts"
import { EventWakeup } from "../../../core/hub/EventWakeup.ts"
import { EventHandOver } from "../../../core/hub/EventHandOver.ts"
import { makeSpacedPasses, workerPassSpacingMillis } from "../../../core/kernel/Passes.ts"
import { RateLimits } from "../../../core/kernel/RateLimit.ts"
import { OrgChatWebhooks } from "../../../core/hub/OrgChatWebhooks.ts"
import { PersonNotifications, type PersonNotificationsConfig } from "../../../core/hub/PersonNotifications.ts"
import { NotificationDeliveries, type NotificationDeliveriesConfig } from "../../../core/hub/NotificationDeliveries.ts"

/** The stores of events, the catalog, the feed, the channels' outbox and push subscriptions, in memory. */
export const HubEventStoresMemory = Layer.mergeAll(
  EventStoreMemory,
  CatalogStoreMemory,
  NotificationStoreMemory,
  PushSubscriptionStoreMemory,
  OrgChatWebhookStoreMemory
)

/**
 * The same stores over the `hub` schema (migrations 0004_events, 0005_notifications and 0008_deliveries);
 * the catalog's entries kept per instance, dropped on every instance when one is replaced; the processor's
 * writes of a batch in one statement (NotificationFilingSql).
 */
export const HubEventStoresSql = Layer.mergeAll(
  EventStoreSql,
  CatalogStoreWithCacheSql,
  NotificationStoreSql,
  NotificationFilingSql,
  DeliveryStoreSql,
  PushSubscriptionStoreSql,
  OrgChatWebhookStoreSql
)

export interface HubEventsConfig {
  /**
   * Per-service quota on event delivery: at most `limit` deliveries per `windowMillis`, shared by every
   * instance on the same rate-limit store (`RateLimits`).
   */
  readonly quota: { readonly limit: number; readonly windowMillis: number }
  readonly processor?: EventProcessorConfig | undefined
  readonly deliveries: NotificationDeliveriesConfig
  readonly person: PersonNotificationsConfig
}

/**
 * Ingest, catalog, processing and the channels' delivery. Needs the stores (above), Registry, ServiceStore,
 * Directory, IdGenerator, Transactions, RateLimits and the channels (Mailer, ChatChannel, PushChannel). Provides
 * EventIngest, EventCatalog, EventProcessor, NotificationDeliveries, PersonNotifications, OrgChatWebhooks,
 * EventWakeup, EventHandOver and DeliveryWakeup.
 */
export const HubEventsLayer = (config: HubEventsConfig) => {
  const budget = {
    name: "hub.events",
    limit: config.quota.limit,
    windowMillis: config.quota.windowMillis,
    whenStoreFails: "local"
  } as const
  const ingest = Layer.unwrap(
    Effect.map(Effect.service(RateLimits), (limits) =>
      EventIngest.layer({
        // A producer's concurrent deliveries share one store call (adapters/http/CoalescedRateLimiterStore.ts).
        quota: (service) =>
          limits.take(budget, service).pipe(
            Effect.as(undefined),
            // A `local` budget never answers Unavailable; were it to, the delivery is retried later all the same.
            Effect.catchTags({
              RateLimited: (e) => Effect.succeed(e.retryAfterSeconds),
              Unavailable: () => Effect.succeed(30)
            })
          )
      })
    )
  )
  return Layer.mergeAll(
    ingest,
    EventProcessor.layer(config.processor),
    NotificationDeliveries.layer(config.deliveries),
    PersonNotifications.layer(config.person)
  ).pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        EventCatalog.layer,
        EventHandOver.layer({ leaseMillis: config.processor?.leaseMillis }).pipe(Layer.provideMerge(EventWakeup.layer)),
        DeliveryWakeup.layer,
        OrgChatWebhooks.layer(config.person)
      )
    )
  )
}

/**
 * The hub's event workers. The processor drains what is handed over and what is claimable, then sleeps until
 * woken by an accept or `pollMillis` pass, its passes at least `workerPassSpacingMillis` (50 ms) apart; the
 * channels' sender runs once the processor has committed a delivery due at once (DeliveryWakeup), and every
 * `pollMillis` (retries and digests come due with time). Both claim, so several servers may run side by side.
 */
export const HubEventWorkers = (pollMillis: number) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const processor = yield* EventProcessor
      const deliveries = yield* NotificationDeliveries
      const wakeup = yield* EventWakeup
      const deliveryWakeup = yield* DeliveryWakeup
      // While this worker runs, this instance's ingest hands its notifications straight to it.
      yield* (yield* EventHandOver).open
      const drainEvents = Effect.gen(function* () {
        // Again at once only after a full batch: one that was not full left nothing due (a claim fewer per pass).
        while ((yield* processor.runDue()) >= processor.batchSize) {
          /* more may be due */
        }
      })
      // Passes spaced: events accepted one at a time within the spacing are processed as one batch.
      const spaced = makeSpacedPasses(workerPassSpacingMillis)
      yield* spaced(drainEvents).pipe(
        Effect.catchCause((cause) => Effect.logWarning("event processing failed; retrying", cause)),
        Effect.andThen(wakeup.sleep(pollMillis)),
        Effect.forever,
        Effect.forkScoped
      )
      const drainDeliveries = Effect.gen(function* () {
        while ((yield* deliveries.runDue()) >= deliveries.batchSize) {
          /* more may be due */
        }
      })
      yield* drainDeliveries.pipe(
        Effect.catchCause((cause) => Effect.logWarning("notification delivery failed; retrying", cause)),
        Effect.andThen(deliveryWakeup.sleep(pollMillis)),
        Effect.forever,
        Effect.forkScoped
      )
    })
  )
