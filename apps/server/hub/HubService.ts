import type { HttpServerResponse } from "effect/http"
import { Effect, Layer, type Redacted } from "effect"
import { HubEventPublisherInProcess } from "../../../adapters/http/HubEventPublisherInProcess.ts"
import { withSessionCookie } from "../../../adapters/http/hub/PersonAuth.ts"
import type { ChatChannel, PushChannel } from "../../../core/hub/Channels.ts"
import { seedFirstPartyCatalog } from "../../../core/hub/FirstPartyCatalog.ts"
import type { Mailer } from "../../../core/kernel/Mailer.ts"
import type { ServiceCalls } from "../../../core/hub/Workspace.ts"
import type { ServiceProbe } from "../../../core/hub/ServiceProbe.ts"
import { Sessions } from "../../../core/hub/Sessions.ts"
import type { ServiceSettings } from "../Services.ts"
import { FirstParty, type FirstPartySettings } from "./FirstParty.ts"
import { HubFactRelay, type HubFactRelayConfig } from "./HubFactsRuntime.ts"
import { HubUseCases, HubWorkers, type HubSettings } from "./HubLayers.ts"
import { hubOpenIdRoutes, hubRoutes, type HubOpenIdSettings, type HubRouteSettings } from "./HubRoutes.ts"
import { HubServiceDataUpstreams, type HubServiceDataSettings } from "./HubServiceData.ts"
import { purgeIdempotency } from "../Maintenance.ts"

/** Everything the hub is configured with. */
export interface HubServiceSettings {
  readonly routes: ServiceSettings
  readonly hubRoutes: HubRouteSettings
  readonly openId: HubOpenIdSettings
  readonly useCases: HubSettings
  readonly serviceData: HubServiceDataSettings
  /** The workers' pace and the facts' retries; unset, no worker runs. */
  readonly workers?: Omit<HubFactRelayConfig, "leaseMillis"> | undefined
  /** The first-party services registered at start (decisions, the task inbox); unset, none is. */
  readonly firstParty?: FirstPartySettings | undefined
}

/** What the hub runs over: its stores, and its ways out of the process. */
export interface HubServiceAdapters<Data, E, R> {
  /** `HubDataSql` (its schema migrated: `HubDataMigrated`), or memory stores. */
  readonly data: Layer.Layer<Data, E, R>
  /** The workspace's calls to services, and the facts sent to them. */
  readonly serviceCalls: Layer.Layer<ServiceCalls>
  /** Conformance probes of registered services. */
  readonly serviceProbe: Layer.Layer<ServiceProbe>
  /** One mailer for sign-in links and notification emails. */
  readonly mailer: Layer.Layer<Mailer>
  /** The chat and push channels of notifications. */
  readonly channels: Layer.Layer<ChatChannel | PushChannel>
}

/**
 * The hub as one service (`serving` over `core`): its routes (the hub's API, the workspace, OpenID), its workers (events and
 * deliveries, sign-in links and mail, facts to services, the idempotency purge) and the first-party services
 * registered at start, over its use cases (HubLayers.ts) and the service-data plane's upstreams, over the data
 * given. `events` hands a producer's events to this hub when both run in the same process (no HTTP round
 * trip): it shares the hub's use cases (`core`) with `serving`. Needs the database's `Transactions`, `Readiness` and
 * `RateLimits`.
 */
export const HubService = <Data, E, R>(settings: HubServiceSettings, adapters: HubServiceAdapters<Data, E, R>) => {
  const core = HubServiceDataUpstreams(settings.serviceData).pipe(
    Layer.provideMerge(
      HubUseCases(settings.useCases, adapters.data).pipe(
        Layer.provide(Layer.mergeAll(adapters.serviceCalls, adapters.serviceProbe, adapters.mailer, adapters.channels))
      )
    )
  )
  const publicUrl = settings.useCases.publicUrl
  // The OpenID routes reach the hub's sessions while they answer: taken here, as the routes are built.
  const openIdRoutes = Layer.unwrap(
    Effect.map(Effect.service(Sessions), (sessions) =>
      hubOpenIdRoutes(settings.openId, {
        personOf: (cookie: string) => sessions.find(cookie),
        startSession: (userId: string, response: HttpServerResponse.HttpServerResponse) =>
          Effect.map(sessions.start(userId), (started) => withSessionCookie(response, publicUrl, started))
      })
    )
  )
  const routes = Layer.merge(hubRoutes(settings.routes, settings.hubRoutes), openIdRoutes)
  const workers =
    settings.workers === undefined
      ? Layer.empty
      : Layer.mergeAll(
          HubWorkers(settings.workers.pollMillis),
          HubFactRelay(settings.workers).pipe(Layer.provide(adapters.serviceCalls)),
          purgeIdempotency
        )
  // The first-party services registered from configuration, then the catalog of their event types.
  const firstParty =
    settings.firstParty === undefined
      ? Layer.empty
      : Layer.effectDiscard(seedFirstPartyCatalog).pipe(Layer.provide(FirstParty(settings.firstParty)))
  return {
    /**
     * The hub's use cases and data, built once for the process: provided from outside to the hub's listener
     * and to the services that hand their events over in process. Each listener builds its routes apart
     * (only what it is given is shared), so a use case provided inside both would open the hub's stores,
     * caches and wake-up connections twice.
     */
    core,
    /** The routes and workers; they need `core`. */
    serving: routes.pipe(Layer.provide(Layer.merge(workers, firstParty))),
    /** The in-process publisher of a producer's events; it needs `core`. */
    events: (signingKey: Redacted.Redacted<string>) => HubEventPublisherInProcess({ signingKey })
  }
}
