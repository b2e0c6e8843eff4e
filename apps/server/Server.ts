import { Layer, Option, type Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import { Otlp, PrometheusMetrics } from "effect/observability"
import { RecordUpdaterAirtableOn } from "../../adapters/airtable/RecordUpdaterAirtable.ts"
import { RateLimitsFromStore } from "../../adapters/http/RateLimits.ts"
import { listen, type ListenOptions } from "../../adapters/http/ServiceHttp.ts"
import { tasksRenderer } from "../../adapters/http/tasks/TasksErrors.ts"
import { WebhookSenderHttp } from "../../adapters/http/WebhookSenderHttp.ts"
import { Database } from "../../adapters/sql/Database.ts"
import { SqlGroupCommit, TransactionsSql } from "../../adapters/sql/TransactionsSql.ts"
import { publicUrls, serviceUrls, type Ports } from "./Addresses.ts"
import type { Secrets, ServerConfig } from "./Config.ts"
import { decisionsSettingsOf } from "./decisions/DecisionsConfig.ts"
import { DecisionsDataMigrated } from "./decisions/DecisionsData.ts"
import { DecisionsService } from "./decisions/DecisionsService.ts"
import { embeddedSchemas } from "./EmbeddedSchemas.ts"
import { hubAdaptersOf, hubSettingsOf } from "./hub/HubConfig.ts"
import { HubDataMigrated } from "./hub/HubLayers.ts"
import { HubService } from "./hub/HubService.ts"
import { analyzeEmbedded, ReadinessFromDatabase } from "./Maintenance.ts"
import { RateLimiterStoreFromConfig } from "./RateLimitsRuntime.ts"
import type { ServiceAddresses } from "./Services.ts"
import { runningServices } from "./StartChecks.ts"
import { AirtableFromConfig, TasksRecordStoreFromConfig } from "./tasks/AirtableRuntime.ts"
import { tasksSettingsOf } from "./tasks/TasksConfig.ts"
import { TasksDataMigrated } from "./tasks/TasksRuntime.ts"
import { TasksService } from "./tasks/TasksService.ts"

export interface ServerOptions {
  readonly config: ServerConfig
  readonly secrets: Secrets
  /**
   * The key that signs the ID tokens of the hub's OpenID provider (PEM). Unset: HUB_OIDC_SIGNING_KEY; outside
   * production, without either, a key of this process's own (main.ts keeps one under DATA_DIR instead).
   */
  readonly oidcSigningKey?: Redacted.Redacted<string> | undefined
  /**
   * Where text for the person at the console goes, plainly (outside production, emails not sent for want of a
   * mail server, sign-in links included). Unset, such emails are written in log lines.
   */
  readonly print?: ((text: string) => void) | undefined
  /** Ports to listen on; 0 picks a free one (tests). Defaults to the configured ports. */
  readonly ports?: Ports | undefined
}

/**
 * With OTEL_EXPORTER_OTLP_ENDPOINT set, logs, traces and metrics are also exported over OpenTelemetry
 * (OTLP/HTTP JSON); the log lines keep going to the console as well.
 */
const telemetry = (config: ServerConfig) =>
  Option.match(config.otlpEndpoint, {
    onNone: () => Layer.empty,
    onSome: (baseUrl) =>
      Otlp.layerJson({
        baseUrl,
        resource: { serviceName: config.otlpServiceName },
        loggerMergeWithExisting: true
      }).pipe(Layer.provide(FetchHttpClient.layer))
  })

/**
 * `listeners` over the hub's use cases, when this process runs the hub. Without it, nothing here needs them: the
 * hub's listener is empty and no service hands its events over in process (the type cannot see that).
 */
const withHubCore = <A, E, R, A2, E2, R2>(
  listeners: Layer.Layer<A, E, R>,
  core: Layer.Layer<A2, E2, R2> | undefined
): Layer.Layer<A, E | E2, Exclude<R, A2> | R2> =>
  core === undefined ? (listeners as Layer.Layer<A, E, Exclude<R, A2>>) : listeners.pipe(Layer.provide(core))

/**
 * The bundled server: the database (a Postgres server, or the embedded default under DATA_DIR) and what every
 * service shares over it (its units of work, readiness, the rate budgets), then one listener for each service
 * of SERVICES, each over its service's one layer (`HubService`, `DecisionsService`, `TasksService`, each
 * migrating its own schema). Closing the layer stops the listeners first (draining in-flight requests), then
 * closes the database.
 */
export const makeServer = (options: ServerOptions) => {
  const { config, secrets } = options
  const production = config.environment === "production"
  const running = runningServices(config)
  const ports = options.ports ?? { hub: config.hubPort, decisions: config.decisionsPort, tasks: config.tasksPort }
  const addresses: ServiceAddresses = { internal: serviceUrls(config, ports), public: publicUrls(config, ports) }
  // Outside production a line per answer (health polls included) is noise: written at debug level there.
  const at = (service: ListenOptions["service"], port: number, canonicalUrl?: string) => ({
    service,
    port,
    host: config.host,
    drainMillis: config.drainMillis,
    answerLogLevel: production ? ("Info" as const) : ("Debug" as const),
    canonicalUrl: production ? undefined : canonicalUrl
  })

  const database = Database.layer({
    url: Option.getOrUndefined(config.databaseUrl),
    dataDir: config.dataDir,
    image: Option.getOrUndefined(Option.map(config.embeddedImage, (dir) => ({ dir, schemas: embeddedSchemas })))
  })
  // One store of rate budgets for every limit of every service, shared with the other instances; Airtable's
  // limiter of requests per base keeps its turns there too, one client for the task inbox and decisions.
  const rateLimitStore = RateLimiterStoreFromConfig(config)
  const airtable = AirtableFromConfig(config, rateLimitStore)

  const hub = running.has("hub")
    ? HubService(hubSettingsOf(config, secrets, addresses, options.oidcSigningKey), {
        data: HubDataMigrated,
        ...hubAdaptersOf(config, secrets, options.print)
      })
    : undefined
  // The services' events reach the hub of this process without a round trip over HTTP, unless HUB_URL names
  // a hub of its own (then they go over HTTP, signed, as from any producer).
  const hubPublisher = hub !== undefined && Option.isNone(config.hubUrl) ? hub.events : undefined

  const hubListener = hub === undefined ? Layer.empty : listen(hub.serving, at("hub", ports.hub, addresses.public.hub))
  const decisionsListener = running.has("decisions")
    ? listen(
        DecisionsService(decisionsSettingsOf(config, secrets, addresses), {
          data: DecisionsDataMigrated,
          recordUpdater: RecordUpdaterAirtableOn.pipe(Layer.provide(airtable)),
          webhookSender: WebhookSenderHttp({ allowLoopback: !production }),
          hubPublisher
        }),
        { ...at("decisions", ports.decisions, addresses.internal.decisions), dialect: "decisions" }
      )
    : Layer.empty
  const tasksListener = running.has("tasks")
    ? listen(
        TasksService(tasksSettingsOf(config, secrets, addresses), {
          data: TasksDataMigrated(TasksRecordStoreFromConfig(config, airtable)),
          hubPublisher
        }),
        { ...at("tasks", ports.tasks, addresses.public.tasks), render: tasksRenderer }
      )
    : Layer.empty
  const metricsListener = Option.match(config.metricsPort, {
    onNone: () => Layer.empty,
    onSome: (port) => listen(PrometheusMetrics.layerHttp({ path: "/metrics" }), at("metrics", port))
  })

  // The hub's use cases once, for its listener and the services' in-process publisher alike.
  return withHubCore(Layer.mergeAll(hubListener, decisionsListener, tasksListener, metricsListener), hub?.core).pipe(
    // What every service shares over the one database: its units of work (TransactionsSql, once), readiness.
    Layer.provide(
      Layer.mergeAll(
        ReadinessFromDatabase,
        TransactionsSql,
        analyzeEmbedded,
        RateLimitsFromStore.pipe(Layer.provide(rateLimitStore))
      )
    ),
    // Beside the database, so that the TransactionsSql built over it groups shared units as configured.
    Layer.provideMerge(Layer.merge(database, Layer.succeed(SqlGroupCommit, config.sqlGroupCommit))),
    Layer.provide(telemetry(config))
  )
}
