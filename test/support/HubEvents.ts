import { Effect, Layer } from "effect"
import type { SqlClient } from "effect/sql"
import { DirectoryMemory } from "../../adapters/memory/hub/DirectoryMemory.ts"
import { ServiceStoreMemory } from "../../adapters/memory/hub/ServiceStoreMemory.ts"
import { eventsMigration } from "../../adapters/sql/hub/0004_events.ts"
import { notificationsMigration } from "../../adapters/sql/hub/0005_notifications.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { idempotencyMigration } from "../../adapters/sql/platform/0001_idempotency.ts"
import { HubEventsLayer, HubEventStoresMemory, type HubEventsConfig } from "../../apps/server/HubEventsRuntime.ts"
import { sign } from "../../core/auth/Signature.ts"
import { Registry } from "../../core/hub/Registry.ts"
import { IdGeneratorUlid } from "../../core/kernel/Ids.ts"
import type { SqlBackend } from "./Databases.ts"

/** A hub event SQL adapter on a freshly migrated `hub` schema (idempotency, events, notifications). */
export const hubEventsSqlOn = <A>(
  adapter: Layer.Layer<A, never, SqlClient.SqlClient>,
  backend: SqlBackend
): Layer.Layer<A, unknown> =>
  adapter.pipe(
    Layer.provide(migrationsLayer("hub", [idempotencyMigration("hub", 1), eventsMigration, notificationsMigration])),
    Layer.provide(backend.layer)
  )

export const testSecretsKey = "test-hub-secrets-key-0123456789abcdef"

/**
 * The hub's event side on memory adapters (or on the given stores): registry, directory, ids, the stores,
 * ingest, catalog, processor, batcher, wake-up and the recording channels.
 */
export const hubEventsStack = <E>(
  config: Partial<HubEventsConfig> = {},
  stores: Layer.Layer<Layer.Success<typeof HubEventStoresMemory>, E> = HubEventStoresMemory
) => {
  const base = Layer.mergeAll(
    Registry.layer({ secretsKey: testSecretsKey, allowLoopbackHttp: true }).pipe(
      Layer.provideMerge(ServiceStoreMemory)
    ),
    DirectoryMemory,
    IdGeneratorUlid,
    stores
  )
  return HubEventsLayer({ quota: { limit: 100_000, windowMillis: 60_000 }, ...config }).pipe(Layer.provideMerge(base))
}

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
