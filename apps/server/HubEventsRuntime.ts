import { Effect, Layer, Schedule } from "effect"
import { CatalogStoreMemory } from "../../adapters/memory/hub/CatalogStoreMemory.ts"
import { ChannelsRecording } from "../../adapters/memory/hub/ChannelsRecording.ts"
import { EmailQueueMemory } from "../../adapters/memory/hub/EmailQueueMemory.ts"
import { EventStoreMemory } from "../../adapters/memory/hub/EventStoreMemory.ts"
import { NotificationStoreMemory } from "../../adapters/memory/hub/NotificationStoreMemory.ts"
import { makeRateLimiter } from "../../adapters/http/RateLimiter.ts"
import { CatalogStoreSql } from "../../adapters/sql/hub/CatalogStoreSql.ts"
import { EmailQueueSql } from "../../adapters/sql/hub/EmailQueueSql.ts"
import { EventStoreSql } from "../../adapters/sql/hub/EventStoreSql.ts"
import { NotificationStoreSql } from "../../adapters/sql/hub/NotificationStoreSql.ts"
import { EventCatalog } from "../../core/hub/EventCatalog.ts"
import { EventIngest } from "../../core/hub/EventIngest.ts"
import { EmailBatcher, EventProcessor, type EventProcessorConfig } from "../../core/hub/EventProcessor.ts"
import { EventWakeup } from "../../core/hub/EventWakeup.ts"

/** The stores of events, the catalog, the feed and the email queue, in memory. */
export const HubEventStoresMemory = Layer.mergeAll(
  EventStoreMemory,
  CatalogStoreMemory,
  NotificationStoreMemory,
  EmailQueueMemory
)

/** The same stores over the `hub` schema (migrations 0004_events and 0005_notifications). */
export const HubEventStoresSql = Layer.mergeAll(EventStoreSql, CatalogStoreSql, NotificationStoreSql, EmailQueueSql)

export interface HubEventsConfig {
  /** Per-service quota on event delivery: at most `limit` deliveries per `windowMillis`, per server instance. */
  readonly quota: { readonly limit: number; readonly windowMillis: number }
  readonly processor?: EventProcessorConfig | undefined
}

/**
 * Ingest, catalog, processing and email batching, with the recording channels. Needs the stores (above),
 * Registry, ServiceStore, Directory and IdGenerator. Provides EventIngest, EventCatalog, EventProcessor,
 * EmailBatcher, EventWakeup and the channel ports with ChannelRecordings.
 */
export const HubEventsLayer = (config: HubEventsConfig) => {
  const quota = makeRateLimiter({ limit: config.quota.limit, windowMs: config.quota.windowMillis })
  const catalog = EventCatalog.layer
  return Layer.mergeAll(
    EventIngest.layer({ quota }),
    EventProcessor.layer(config.processor),
    EmailBatcher.layer()
  ).pipe(Layer.provideMerge(Layer.mergeAll(catalog, EventWakeup.layer, ChannelsRecording)))
}

/**
 * The hub's event workers: the processor drains what is claimable, then sleeps until woken by an accept or
 * `pollMillis` pass; the email batcher runs every `emailIntervalMillis` (one email per user per interval).
 * Both claim with leases, so several servers may run them side by side.
 */
export const HubWorkers = (pollMillis: number, emailIntervalMillis: number) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const processor = yield* EventProcessor
      const batcher = yield* EmailBatcher
      const wakeup = yield* EventWakeup
      const drain = Effect.gen(function* () {
        while ((yield* processor.runDue()) > 0) {
          /* more may be due */
        }
      })
      yield* drain.pipe(
        Effect.catchCause((cause) => Effect.logWarning("event processing failed; retrying", cause)),
        Effect.andThen(wakeup.sleep(pollMillis)),
        Effect.forever,
        Effect.forkScoped
      )
      yield* batcher.runDue().pipe(
        Effect.catchCause((cause) => Effect.logWarning("email batching failed; retrying", cause)),
        Effect.repeat(Schedule.spaced(emailIntervalMillis)),
        Effect.forkScoped
      )
    })
  )
