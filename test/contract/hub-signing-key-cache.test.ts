import { RateLimitsMemory } from "../../adapters/http/RateLimits.ts"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { FactOutboxMemory } from "../../adapters/memory/hub/FactOutboxMemory.ts"
import { monotonicFactory } from "ulid"
import { DirectoryMemory } from "../../adapters/memory/hub/DirectoryMemory.ts"
import { CredentialNotices, CredentialNoticesSql } from "../../adapters/sql/CredentialNotices.ts"
import type { DatabaseServices } from "../../adapters/sql/Database.ts"
import { hubMigrations } from "../../adapters/sql/hub/migrations.ts"
import { ServiceStoreWithKeyCacheSql } from "../../adapters/sql/hub/ServiceStoreWithKeyCacheSql.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { HubEventStoresMemory } from "../../apps/server/hub/HubEventsRuntime.ts"
import { HubEventUseCases } from "../../apps/server/hub/HubLayers.ts"
import { EventCatalog } from "../../core/hub/EventCatalog.ts"
import { EventIngest } from "../../core/hub/EventIngest.ts"
import { notificationDataSchema } from "../../core/hub/FirstPartyCatalog.ts"
import { Registry } from "../../core/hub/Registry.ts"
import { sqlBackends, type SqlBackend } from "../support/Databases.ts"
import { signedDelivery, testPublicUrl, testSecretsKey } from "../support/HubEvents.ts"
import { acknowledgement, instanceOn, statementsOf, twoWaysIn } from "../support/TwoInstances.ts"
import { ServiceStoreContract } from "./ServiceStore.contract.ts"
import { hubSqlOn } from "./hub-sql-layers.ts"
import { ChannelsMemory } from "../../adapters/memory/hub/ChannelsMemory.ts"
import { MailerMemory } from "../../adapters/memory/MailerMemory.ts"
import { TransactionsMemory } from "../../adapters/memory/TransactionsMemory.ts"

/**
 * The hub's event ingest on two instances over one database, each keeping producers' opened signing keys:
 * a rotation or a suspension on one is honoured by the other at its next delivery once the change has
 * committed (on a Postgres server, once its listener acknowledges the notice).
 */

const ulid = monotonicFactory()

/**
 * One hub instance, composed as the server composes it (`HubEventUseCases`): registry over the SQL store with
 * its key cache; events, catalog and directory in memory.
 */
const hubInstance = Layer.mergeAll(
  HubEventUseCases(
    {
      secretsKey: testSecretsKey,
      allowLoopbackHttp: true,
      publicUrl: testPublicUrl,
      events: { quota: { limit: 100_000, windowMillis: 60_000 }, deliveryRetrySchedule: [60] }
    },
    Layer.mergeAll(ServiceStoreWithKeyCacheSql, DirectoryMemory, FactOutboxMemory, HubEventStoresMemory)
  ).pipe(Layer.provideMerge(Layer.mergeAll(TransactionsMemory, MailerMemory, ChannelsMemory, RateLimitsMemory))),
  CredentialNoticesSql
)

const instance = (database: Context.Context<DatabaseServices>) =>
  Effect.gen(function* () {
    const context = yield* instanceOn(hubInstance, database)
    return {
      catalog: Context.get(context, EventCatalog),
      ingest: Context.get(context, EventIngest),
      registry: Context.get(context, Registry),
      notices: Context.get(context, CredentialNotices)
    }
  })

type Instance = Effect.Success<ReturnType<typeof instance>>

/** A delivery from acme signed with `secret`: accepted, or the tag of its refusal. */
const deliver = (hub: Instance, secret: string) => {
  const body = JSON.stringify({
    id: ulid(),
    type: "acme.notification.created",
    service: "acme",
    occurredAt: new Date().toISOString(),
    subject: { email: "ada@example.com" },
    data: { title: "Your report is ready" },
    contractVersion: "v1"
  })
  const delivery = signedDelivery({
    secret,
    body,
    timestamp: Math.floor(Date.now() / 1000),
    eventId: JSON.parse(body).id
  })
  return hub.ingest.ingest(delivery).pipe(
    Effect.map((outcome) => outcome.status),
    Effect.catch((error) => Effect.succeed(error._tag))
  )
}

const twoHubs = (backend: SqlBackend) =>
  Effect.gen(function* () {
    const { first, second } = yield* twoWaysIn(backend, migrationsLayer("hub", hubMigrations))
    const a = yield* instance(first)
    const b = yield* instance(second)
    const registered = yield* a.registry.register({ id: "acme", displayName: "Acme", baseUrl: "https://acme.example" })
    for (const hub of [a, b]) {
      yield* hub.catalog.add({
        type: "acme.notification.created",
        producer: "acme",
        isNotification: true,
        dataSchema: notificationDataSchema
      })
    }
    return { a, b, key: registered.credentials.signingKey }
  })

for (const backend of sqlBackends) {
  ServiceStoreContract(`${backend.name}, with the signing key cache`, hubSqlOn(ServiceStoreWithKeyCacheSql, backend))

  describe(`producers' signing keys kept across two hub instances (${backend.name})`, () => {
    it.live("a delivery with a kept key reads nothing; after a rotation on one, the other refuses the old key", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { a, b, key } = yield* twoHubs(backend)
          const [first, read] = yield* statementsOf(deliver(b, key))
          assert.strictEqual(first, "accepted")
          assert.lengthOf(read, 1, "the first delivery reads the producer's registration")
          const [second, none] = yield* statementsOf(deliver(b, key))
          assert.strictEqual(second, "accepted")
          assert.deepStrictEqual(none, [], "the next delivery reads nothing")

          const heard = yield* acknowledgement(b.notices, backend, { scope: "hub.services", id: "acme" })
          const rotated = yield* a.registry.rotate("acme", "signingKey")
          yield* heard
          assert.strictEqual(yield* deliver(b, key), "Unauthorized")
          assert.strictEqual(yield* deliver(b, rotated.value), "accepted")
          assert.strictEqual(yield* deliver(a, key), "Unauthorized")
        })
      )
    )

    it.live("after a suspension on one instance, the other refuses the producer's deliveries", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { a, b, key } = yield* twoHubs(backend)
          assert.strictEqual(yield* deliver(b, key), "accepted")
          assert.deepStrictEqual((yield* statementsOf(deliver(b, key)))[1], [])

          const heard = yield* acknowledgement(b.notices, backend, { scope: "hub.services", id: "acme" })
          yield* a.registry.suspend("acme")
          yield* heard
          assert.strictEqual(yield* deliver(b, key), "Unauthorized")
          // A suspended producer has no key to keep: every delivery looks it up again.
          assert.lengthOf((yield* statementsOf(deliver(b, key)))[1], 1)
        })
      )
    )
  })
}
