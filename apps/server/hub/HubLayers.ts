import { Layer } from "effect"
import { migrationsLayer } from "../../../adapters/sql/Migrator.ts"
import { hubMigrations } from "../../../adapters/sql/hub/migrations.ts"
import { IdempotencyStoreSql } from "../../../adapters/sql/IdempotencyStoreSql.ts"
import { DirectorySql } from "../../../adapters/sql/hub/DirectorySql.ts"
import { FactOutboxSql } from "../../../adapters/sql/hub/FactOutboxSql.ts"
import { ServiceStoreWithKeyCacheSql } from "../../../adapters/sql/hub/ServiceStoreWithKeyCacheSql.ts"
import { RecordingGrantAuditSql } from "../../../adapters/sql/hub/RecordingGrantAuditSql.ts"
import { ShortLinkStoreSql } from "../../../adapters/sql/hub/ShortLinkStoreSql.ts"
import { Conformance } from "../../../core/hub/Conformance.ts"
import type { EventProcessorConfig } from "../../../core/hub/EventProcessor.ts"
import { HubFacts } from "../../../core/hub/HubFacts.ts"
import { Identity } from "../../../core/hub/Identity.ts"
import { IdentityTokens } from "../../../core/hub/IdentityTokens.ts"
import { Registry } from "../../../core/hub/Registry.ts"
import { Workspace } from "../../../core/hub/Workspace.ts"
import { IdGeneratorUlid } from "../../../core/kernel/Ids.ts"
import { HubEventStoresSql, HubEventWorkers, HubEventsLayer, type HubEventsConfig } from "./HubEventsRuntime.ts"
import { HubSignInLayer, HubSignInStoresSql, HubSignInWorkers, type HubSignInConfig } from "./HubSignInRuntime.ts"

export interface HubDirectorySettings {
  /** HUB_SECRETS_KEY seals services' credentials; unset, the registry fails closed (nothing is registered). */
  readonly secretsKey: string | undefined
  /** Services on http to loopback (outside production). */
  readonly allowLoopbackHttp: boolean
}

/**
 * The hub's directory use cases, the one composition the bundled server, the seed and the tests use:
 * organizations, people, memberships and installations (`Identity`) and the service registry (`Registry`),
 * over the data adapters given (the directory and service stores, memory or SQL; also provided). The hub's
 * other use cases (workspace, conformance, events, sign-in) run over it (`HubUseCases`).
 */
export const HubDirectoryUseCases = <Data, E, R>(settings: HubDirectorySettings, data: Layer.Layer<Data, E, R>) =>
  Layer.merge(Identity.layer.pipe(Layer.provide(HubFacts.layer)), Registry.layer(settings)).pipe(
    Layer.provideMerge(Layer.merge(data, IdGeneratorUlid))
  )

export interface HubEventSettings {
  /** Per-service quota on event deliveries (`HUB_EVENTS_PER_MINUTE` a minute), shared by every instance. */
  readonly quota: HubEventsConfig["quota"]
  readonly processor?: EventProcessorConfig | undefined
  /** Seconds before each retry of an email, chat or push delivery (`HUB_DELIVERY_RETRY_SCHEDULE`). */
  readonly deliveryRetrySchedule: ReadonlyArray<number>
  /** How long a delivery's claim is held; the channels' sender's default when unset. */
  readonly deliveryLeaseMillis?: number | undefined
}

export interface HubSettings extends HubDirectorySettings {
  /** The platform's issuer (`PLATFORM_ISSUER`): identity tokens minted for services, conformance probes. */
  readonly issuer: string
  /** Where people's browsers reach the hub (`HUB_PUBLIC_URL`): the base of every link it sends. */
  readonly publicUrl: string
  readonly events: HubEventSettings
  /** Sessions and links (docs/sign-in.md). */
  readonly signIn: Omit<HubSignInConfig, "publicUrl" | "secretsKey">
}

/** The event side's configuration, from the hub's settings: one secrets key and one public URL throughout. */
const eventsLayer = (settings: HubDirectorySettings & Pick<HubSettings, "publicUrl" | "events">) =>
  HubEventsLayer({
    quota: settings.events.quota,
    processor: settings.events.processor,
    deliveries: {
      publicUrl: settings.publicUrl,
      secretsKey: settings.secretsKey,
      retrySchedule: settings.events.deliveryRetrySchedule,
      leaseMillis: settings.events.deliveryLeaseMillis
    },
    person: { secretsKey: settings.secretsKey, allowLoopbackHttp: settings.allowLoopbackHttp }
  })

/**
 * The hub's event side over its directory: ingest, catalog, processing, the feed and the channels' delivery
 * (`HubEventsLayer`), with the registry and directory of `HubDirectoryUseCases`. Needs what `HubEventsLayer`
 * needs beyond the data: units of work, `RateLimits`, a Mailer and the chat and push channels.
 */
export const HubEventUseCases = <Data, E, R>(
  settings: HubDirectorySettings & Pick<HubSettings, "publicUrl" | "events">,
  data: Layer.Layer<Data, E, R>
) => eventsLayer(settings).pipe(Layer.provideMerge(HubDirectoryUseCases(settings, data)))

/**
 * The workspace (docs/pages.md): the apps, pages and actions of the services a person uses, called with
 * identity tokens the hub mints (`IdentityTokens`, also provided). Needs `ServiceCalls`, the registry and the
 * directory.
 */
export const HubWorkspaceUseCases = (settings: Pick<HubSettings, "issuer">) =>
  Workspace.layer.pipe(Layer.provideMerge(IdentityTokens.layer({ issuer: settings.issuer })))

/**
 * The hub's use cases, the one composition the bundled server and the tests use: the directory and registry
 * (`HubDirectoryUseCases`); the workspace (`Workspace`, minting identity tokens with `IdentityTokens`);
 * conformance checks (`Conformance`); events and notifications (`HubEventsLayer`); sign-in, sessions and the
 * mail outbox (`HubSignInLayer`). Over the data given (`HubDataSql`, or memory stores; also provided, for the
 * routes' own needs), it needs units of work (`Transactions`), `RateLimits`, and the ways out of the process:
 * `ServiceCalls` (the workspace's calls), `ServiceProbe` (conformance), a `Mailer` (one for sign-in and
 * notification emails) and the chat and push channels.
 */
export const HubUseCases = <Data, E, R>(settings: HubSettings, data: Layer.Layer<Data, E, R>) =>
  Layer.mergeAll(
    HubWorkspaceUseCases(settings),
    Conformance.layer({ issuer: settings.issuer }),
    eventsLayer(settings),
    HubSignInLayer({ ...settings.signIn, publicUrl: settings.publicUrl, secretsKey: settings.secretsKey })
  ).pipe(Layer.provideMerge(HubDirectoryUseCases(settings, data)))

/**
 * Every store of the hub over its `hub` schema: directory, services (keys cached), events, sign-in, short
 * links, the audit of recording grants, idempotency.
 */
export const HubDataSql = Layer.mergeAll(
  DirectorySql,
  ServiceStoreWithKeyCacheSql,
  HubEventStoresSql,
  HubSignInStoresSql,
  ShortLinkStoreSql,
  RecordingGrantAuditSql,
  FactOutboxSql,
  IdempotencyStoreSql("hub")
)

/** `HubDataSql` on a database whose `hub` schema is migrated first: what the server runs on. */
export const HubDataMigrated = HubDataSql.pipe(Layer.provide(migrationsLayer("hub", hubMigrations)))

/**
 * The hub's workers: events processed and the channels' deliveries sent (`HubEventWorkers`), the mail outbox
 * sent and ended sessions swept (`HubSignInWorkers`). Each claims with leases, so several servers run them side
 * by side.
 */
export const HubWorkers = (pollMillis: number) => Layer.merge(HubEventWorkers(pollMillis), HubSignInWorkers(pollMillis))
