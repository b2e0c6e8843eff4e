import { RateLimitsMemory } from "../../adapters/http/RateLimits.ts"
import { Effect, Layer } from "effect"
import { FactOutboxMemory } from "../../adapters/memory/hub/FactOutboxMemory.ts"
import type { SqlClient } from "effect/sql"
import { DirectoryMemory } from "../../adapters/memory/hub/DirectoryMemory.ts"
import { ServiceStoreMemory } from "../../adapters/memory/hub/ServiceStoreMemory.ts"
import { eventsMigration } from "../../adapters/sql/hub/0004_events.ts"
import { notificationsMigration } from "../../adapters/sql/hub/0005_notifications.ts"
import { deliveriesMigration } from "../../adapters/sql/hub/0008_deliveries.ts"
import { orgChatWebhooksMigration } from "../../adapters/sql/hub/0011_org_chat_webhooks.ts"
import { notificationActionsMigration } from "../../adapters/sql/hub/0018_notification_actions.ts"
import { ChannelsMemory } from "../../adapters/memory/hub/ChannelsMemory.ts"
import { MailerMemory } from "../../adapters/memory/MailerMemory.ts"
import { TransactionsMemory } from "../../adapters/memory/TransactionsMemory.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { idempotencyMigration } from "../../adapters/sql/platform/0001_idempotency.ts"
import { HubEventStoresMemory } from "../../apps/server/hub/HubEventsRuntime.ts"
import { HubEventUseCases, type HubEventSettings } from "../../apps/server/hub/HubLayers.ts"
import { sign } from "../../core/auth/Signature.ts"
import { Registry } from "../../core/hub/Registry.ts"
import type { SqlBackend } from "./Databases.ts"

/**
 * A hub event SQL adapter on a freshly migrated `hub` schema (idempotency, events, notifications, deliveries,
 * organizations' chat webhooks, the answers notifications offer).
 */
export const hubEventsSqlOn = <A>(
  adapter: Layer.Layer<A, never, SqlClient.SqlClient>,
  backend: SqlBackend
): Layer.Layer<A, unknown> =>
  adapter.pipe(
    Layer.provide(
      migrationsLayer("hub", [
        idempotencyMigration("hub", 1),
        eventsMigration,
        notificationsMigration,
        deliveriesMigration,
        orgChatWebhooksMigration,
        notificationActionsMigration
      ])
    ),
    Layer.provide(backend.layer)
  )

export const testSecretsKey = "test-hub-secrets-key-0123456789abcdef"

/** Where the test workspace lives: the links notifications carry. */
export const testPublicUrl = "https://hub.example"

/**
 * The hub's event side as the server composes it (`HubEventUseCases`), on memory adapters (or on the given
 * event stores): registry, directory, ids, units of work, the stores, ingest, catalog, processor, the
 * channels' sender, wake-up, and the memory channels (MailerRecordings, ChannelMessages).
 */
export const hubEventsStack = <E>(
  events: Partial<HubEventSettings> = {},
  stores: Layer.Layer<Layer.Success<typeof HubEventStoresMemory>, E> = HubEventStoresMemory
) =>
  HubEventUseCases(
    {
      secretsKey: testSecretsKey,
      allowLoopbackHttp: true,
      publicUrl: testPublicUrl,
      events: { quota: { limit: 100_000, windowMillis: 60_000 }, deliveryRetrySchedule: [60, 300], ...events }
    },
    Layer.mergeAll(DirectoryMemory, ServiceStoreMemory, FactOutboxMemory, stores)
  ).pipe(Layer.provideMerge(Layer.mergeAll(TransactionsMemory, MailerMemory, ChannelsMemory, RateLimitsMemory)))

/** What a producer sends: the body bytes and the four headers, signed with `secret` at `timestamp`. */
export const signedDelivery = (options: {
  readonly secret: string
  readonly body: string
  readonly timestamp: number
  readonly eventId: string
  readonly delivery?: string | undefined
}) => ({
  body: new TextEncoder().encode(options.body),
  headers: {
    signature: sign({ secret: options.secret, timestamp: options.timestamp, payload: options.body }),
    timestamp: String(options.timestamp),
    eventId: options.eventId,
    delivery: options.delivery ?? `dlv_${options.eventId}`
  }
})

/** Registers a third-party producer and answers its signing key. */
export const registerProducer = (id: string) =>
  Effect.map(
    Registry.use((registry) =>
      registry.register({ id, displayName: `Service ${id}`, baseUrl: `https://${id}.example` })
    ),
    (registered) => registered.credentials.signingKey
  )
