import type { HttpServerResponse } from "effect/http"
import { withSessionCookie } from "../../adapters/http/hub/PersonAuth.ts"
import { Sessions } from "../../core/hub/Sessions.ts"
import { Clock, Effect, Layer, Option, Redacted, Schedule } from "effect"
import type { OrganizationStatuses } from "../../core/events/OrganizationStatuses.ts"
import { HubEventPublisherInProcess } from "../../adapters/http/HubEventPublisherInProcess.ts"
import { FetchHttpClient } from "effect/http"
import { Otlp, PrometheusMetrics } from "effect/observability"
import { listen } from "../../adapters/http/ServiceHttp.ts"
import { tasksRenderer } from "../../adapters/http/tasks/TasksErrors.ts"
import { IdempotencyStore } from "../../core/idempotency/IdempotencyStore.ts"
import { Readiness } from "../../core/kernel/index.ts"
import { Database } from "../../adapters/sql/Database.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { SqlGroupCommit, TransactionsSql } from "../../adapters/sql/TransactionsSql.ts"
import { IdempotencyStoreSql } from "../../adapters/sql/IdempotencyStoreSql.ts"
import { hubMigrations } from "../../adapters/sql/hub/migrations.ts"
import { tasksMigrations } from "../../adapters/sql/tasks/migrations.ts"
import type { PgClient } from "@effect/sql-pg"
import { SqlClient } from "effect/sql"
import type { CallerKeyStore } from "../../core/decisions/CallerKeyStore.ts"
import type { DecisionSignals } from "../../core/decisions/DecisionSignals.ts"
import type { DecisionStore } from "../../core/decisions/DecisionStore.ts"
import type { RoleStore } from "../../core/decisions/RoleStore.ts"
import type { WebhookStore } from "../../core/decisions/WebhookStore.ts"
import type { TemplateStore } from "../../core/decisions/TemplateStore.ts"
import { decisionsMigrations } from "../../adapters/sql/decisions/migrations.ts"
import { embeddedSchemas } from "./EmbeddedSchemas.ts"
import type { ServerConfig, Secrets } from "./Config.ts"
import { DecisionsUseCases } from "./DecisionsLayers.ts"
import { DecisionsEventRelay, DecisionsWorkers, ExpirySweep } from "./DecisionsRuntime.ts"
import type { McpSessionStore } from "../../core/decisions/McpSessionStore.ts"
import type { RecordStoreCredentials } from "../../core/decisions/RecordStoreCredentials.ts"
import type { WebhookOutbox } from "../../core/decisions/WebhookOutbox.ts"
import type { OrganizationAdmins } from "../../core/decisions/OrganizationAdmins.ts"
import type { AnswerLinkUses } from "../../core/decisions/AnswerByLink.ts"
import type { ProducerOutbox } from "../../core/events/ProducerOutbox.ts"
import { RecordUpdaterAirtableOn } from "../../adapters/airtable/RecordUpdaterAirtable.ts"
import { RateLimitsFromStore } from "../../adapters/http/RateLimits.ts"
import { AirtableFromConfig, TasksRecordStoreFromConfig } from "./AirtableRuntime.ts"
import { WebhookSenderHttp } from "../../adapters/http/WebhookSenderHttp.ts"
import {
  decisionsRoutes,
  hubOpenIdRoutes,
  hubRoutes,
  tasksOidcClientId,
  tasksRoutes,
  type HubOpenIdSettings,
  type ServiceSettings
} from "./Services.ts"
import { generateSigningKey } from "./DevSecrets.ts"
import type { TasksWebSignIn } from "../../adapters/http/tasks/SignIn.ts"
import { TasksEventRelay, TasksSql, tasksPublicUrl } from "./TasksRuntime.ts"
import { guardedLookup } from "../../adapters/http/WebhookSenderHttp.ts"
import { ServiceProbeHttp } from "../../adapters/http/ServiceProbeHttp.ts"
import { seedFirstPartyCatalog } from "../../core/hub/FirstPartyCatalog.ts"
import { ServiceCallsHttp } from "../../adapters/http/ServiceCallsHttp.ts"
import { FirstParty } from "./FirstParty.ts"
import { HubDataSql, HubUseCases, HubWorkers } from "./HubLayers.ts"
import { HubServiceDataUpstreams } from "./HubServiceData.ts"
import { HubFactRelay } from "./HubFactsRuntime.ts"
import { MailerFromConfig } from "./Mail.ts"
import { HubChannelsFromConfig } from "./HubChannels.ts"
import { RateLimiterStoreFromConfig } from "./RateLimitsRuntime.ts"
import { publicUrls, serviceUrls, type Ports } from "./Addresses.ts"

/** What the decisions service keeps: its ports, provided by SQL adapters in the bundled server. */
export type DecisionsData = Layer.Layer<
  | DecisionStore
  | RoleStore
  | CallerKeyStore
  | DecisionSignals
  | TemplateStore
  | WebhookStore
  | WebhookOutbox
  | RecordStoreCredentials
  | ProducerOutbox
  | OrganizationAdmins
  | McpSessionStore
  | OrganizationStatuses
  | IdempotencyStore
  | AnswerLinkUses,
  never,
  SqlClient.SqlClient | PgClient.PgClient | Database
>

export interface ServerOptions {
  readonly config: ServerConfig
  readonly secrets: Secrets
  readonly decisionsData: DecisionsData
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

const reveal = (secret: Redacted.Redacted<string> | undefined) =>
  secret === undefined ? undefined : Redacted.value(secret)

/** Readiness is the database answering a ping within its timeout. */
const ReadinessFromDatabase = Layer.effect(
  Readiness,
  Effect.map(Database, (database) => Readiness.of({ check: database.ping }))
)

/** Forgets idempotency records past their 24-hour retention, hourly. */
export const purgeIdempotency = Layer.effectDiscard(
  Effect.gen(function* () {
    const store = yield* IdempotencyStore
    yield* Clock.currentTimeMillis.pipe(
      Effect.flatMap(store.purgeExpired),
      Effect.repeat(Schedule.spaced("1 hour")),
      Effect.forkScoped
    )
  })
)

/**
 * The embedded database has no background statistics collector (a Postgres server's autovacuum analyzes
 * tables as they grow), so without this every list would be planned as if its tables were empty: scans
 * and sorts instead of index reads. Analyzed shortly after start, then hourly, off the request path.
 */
const analyzeEmbedded = Layer.effectDiscard(
  Effect.gen(function* () {
    const database = yield* Database
    if (database.kind !== "embedded") return
    const sql = yield* SqlClient.SqlClient
    yield* sql`ANALYZE`.pipe(
      Effect.catchCause((cause) => Effect.logWarning("could not analyze the embedded database", cause)),
      Effect.delay("5 seconds"),
      Effect.repeat(Schedule.spaced("1 hour")),
      Effect.forkScoped
    )
  })
)

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
 * The bundled server: the database (a Postgres server, or the embedded default under DATA_DIR), each
 * service's migrations, then one listener per service, each over its service's one composition
 * (`DecisionsUseCases`, `HubUseCases`, `TasksUseCases`). Closing the layer stops the listeners first
 * (draining in-flight requests), then closes the database.
 */
export const makeServer = (options: ServerOptions) => {
  const { config, secrets } = options
  const production = config.environment === "production"
  const settings: ServiceSettings = {
    production,
    build: config.build,
    platformIssuer: config.platformIssuer,
    decisionsApiKey: secrets.DECISIONS_API_KEY,
    decisionsEmbedKey: secrets.DECISIONS_EMBED_KEY,
    tasksApiKey: secrets.TASKS_API_KEY,
    decisionsCallerRequestsPerMinute: config.decisionsCallerRequestsPerMinute,
    decisionsUserRequestsPerMinute: config.decisionsUserRequestsPerMinute,
    hubSecretsKey: secrets.HUB_SECRETS_KEY,
    decisionsSecretsKey: secrets.DECISIONS_SECRETS_KEY,
    tasksSecretsKey: secrets.TASKS_SECRETS_KEY,
    decisionsSigningKey: secrets.DECISIONS_SIGNING_KEY,
    tasksSigningKey: secrets.TASKS_SIGNING_KEY,
    webDir: config.webDir
  }
  const ports = options.ports ?? { hub: config.hubPort, decisions: config.decisionsPort, tasks: config.tasksPort }
  // Outside production a line per answer (health polls included) is noise: written at debug level there.
  const at = (port: number) => ({
    port,
    host: config.host,
    drainMillis: config.drainMillis,
    answerLogLevel: production ? ("Info" as const) : ("Debug" as const)
  })
  const urls = serviceUrls(config, ports)

  // Where browsers reach the hub: the issuer of its OpenID provider.
  const hubPublic = publicUrls(config, ports).hub

  const database = Database.layer({
    url: Option.getOrUndefined(config.databaseUrl),
    dataDir: config.dataDir,
    image: Option.getOrUndefined(Option.map(config.embeddedImage, (dir) => ({ dir, schemas: embeddedSchemas })))
  })
  const migrations = Layer.mergeAll(migrationsLayer("hub", hubMigrations), migrationsLayer("tasks", tasksMigrations))
  // One store of rate budgets for every limit of every service, shared with the other instances; Airtable's
  // limiter of requests per base keeps its turns there too, one client for the task inbox and decisions.
  const rateLimitStore = RateLimiterStoreFromConfig(config)
  const airtable = AirtableFromConfig(config, rateLimitStore)

  // The hub over the `hub` schema (HubLayers.ts). Without HUB_SECRETS_KEY the registry fails closed: nothing
  // is registered and signed routes refuse.
  const hubUseCases = HubUseCases(
    {
      secretsKey: reveal(secrets.HUB_SECRETS_KEY),
      allowLoopbackHttp: !production,
      issuer: config.platformIssuer,
      publicUrl: hubPublic,
      events: {
        quota: { limit: config.hubEventsPerMinute, windowMillis: 60_000 },
        processor: {
          leaseMillis: config.hubEventLeaseMillis,
          emailBatchMillis: config.hubEmailBatchMillis,
          // While accepts are handed over, other servers' events and a crashed one's are looked for once a poll.
          claimEveryMillis: config.hubWorkerPollMillis
        },
        deliveryRetrySchedule: config.hubDeliveryRetrySchedule
      },
      signIn: {
        sessions: {
          idleMillis: config.hubSessionIdleMinutes * 60_000,
          maxMillis: config.hubSessionMaxHours * 3_600_000
        },
        emailLinkMillis: config.hubSignInLinkMinutes * 60_000,
        emailLinksPerHour: config.hubSignInLinksPerHour,
        viewerLinkMillis: config.hubViewerLinkHours * 3_600_000
      }
    },
    HubDataSql
  ).pipe(
    Layer.provide(
      Layer.mergeAll(
        ServiceCallsHttp({ allowLoopback: !production, guardLookup: guardedLookup }),
        ServiceProbeHttp({ allowLoopback: !production, guardLookup: guardedLookup }),
        HubChannelsFromConfig(config, secrets),
        // One mail server connection pool for sign-in links and notification emails.
        MailerFromConfig(config, options.print)
      )
    )
  )
  // The service-data plane's upstreams over the hub (HubServiceData.ts): the expert roster, the shortener.
  const hub = HubServiceDataUpstreams({
    publicUrl: hubPublic,
    expertRoster: Option.match(Option.all([config.hubExpertRosterUrl, config.hubExpertRosterKey]), {
      onNone: () => undefined,
      onSome: ([url, key]) => ({ url, key })
    }),
    shortenerUrl: Option.getOrUndefined(config.hubShortenerUrl),
    allowLoopback: !production
  }).pipe(Layer.provideMerge(hubUseCases))
  // Without a key to seal secrets, registering a webhook or a record-store token is refused (fail closed).
  const decisions = DecisionsUseCases(
    {
      secretsKey: secrets.DECISIONS_SECRETS_KEY,
      allowLoopbackHttp: !production,
      webhookRetrySchedule: config.webhookRetrySchedule,
      webhookTimeoutMs: config.webhookTimeoutMillis,
      // Answer links lead to the decisions service as browsers reach it, signed under its secrets key.
      answerLinks:
        secrets.DECISIONS_SECRETS_KEY === undefined
          ? undefined
          : { baseUrl: publicUrls(config, ports).decisions, secretsKey: Redacted.value(secrets.DECISIONS_SECRETS_KEY) }
    },
    {
      data: options.decisionsData,
      recordUpdater: RecordUpdaterAirtableOn.pipe(Layer.provide(airtable)),
      webhookSender: WebhookSenderHttp({ allowLoopback: !production })
    }
  )
  // The services' events reach the hub of this process without a round trip over HTTP, unless HUB_URL names
  // a hub of its own (then they go over HTTP, signed, as from any producer).
  const hubInProcess = Option.isNone(config.hubUrl)
    ? (signingKey: Redacted.Redacted<string>) => HubEventPublisherInProcess({ signingKey }).pipe(Layer.provide(hub))
    : undefined
  const decisionsListener = listen(
    decisionsRoutes({
      ...settings,
      workspaceUrl: hubPublic,
      decisionsPublicUrl: publicUrls(config, ports).decisions
    }),
    {
      ...at(ports.decisions),
      service: "decisions",
      canonicalUrl: production ? undefined : urls.decisions,
      dialect: "decisions"
    }
  ).pipe(
    Layer.provide(
      Layer.mergeAll(
        ExpirySweep(config.expirySweepMillis),
        DecisionsWorkers(config.workerPollMillis),
        DecisionsEventRelay({
          hubUrl: urls.hub,
          signingKey: secrets.DECISIONS_SIGNING_KEY,
          pollMillis: config.eventRelayPollMillis,
          leaseMillis: config.eventRelayLeaseMillis,
          publisher: hubInProcess
        }),
        purgeIdempotency
      )
    ),
    Layer.provide(decisions),
    Layer.provide(migrationsLayer("decisions", decisionsMigrations))
  )

  // The workers, the first-party services registered from configuration, then the catalog of their event types.
  const hubStart = Layer.mergeAll(
    HubWorkers(config.hubWorkerPollMillis),
    HubFactRelay({ pollMillis: config.hubWorkerPollMillis, retrySchedule: config.hubFactRetrySchedule }).pipe(
      Layer.provide(ServiceCallsHttp({ allowLoopback: !production, guardLookup: guardedLookup }))
    ),
    Layer.effectDiscard(seedFirstPartyCatalog).pipe(
      Layer.provide(
        FirstParty({
          decisionsBaseUrl: urls.decisions,
          tasksBaseUrl: urls.tasks,
          tasksAppUrl: tasksPublicUrl(config, ports.tasks),
          decisionsApiKey: secrets.DECISIONS_API_KEY,
          decisionsEmbedKey: secrets.DECISIONS_EMBED_KEY,
          decisionsSigningKey: secrets.DECISIONS_SIGNING_KEY,
          tasksApiKey: secrets.TASKS_API_KEY,
          tasksSigningKey: secrets.TASKS_SIGNING_KEY,
          attempts: 30
        })
      )
    )
  )
  const tasksUrl = tasksPublicUrl(config, ports.tasks)
  const hubOpenId = hubOpenIdSettings({
    config,
    secrets,
    hubPublic,
    tasksUrl,
    production,
    signingKey: options.oidcSigningKey ?? Option.getOrUndefined(config.hubOidcSigningKey)
  })
  const hubListener = listen(
    Layer.merge(
      hubRoutes(settings, {
        adminKey: secrets.HUB_ADMIN_KEY,
        contextKeys: config.hubContextKeys,
        callsPerMinute: config.hubCallsPerMinute,
        providerProfiles: config.hubProviderProfiles,
        signInWithProvider: hubOpenId.signIn !== undefined,
        signIn: {
          publicUrl: hubPublic,
          perAddress: config.hubSignInPerAddress,
          perClient: config.hubSignInPerClient,
          windowMillis: 15 * 60_000
        }
      }),
      hubOpenIdRoutes(hubOpenId, {
        personOf: (cookie: string) =>
          Effect.gen(function* () {
            return yield* (yield* Sessions).find(cookie)
          }),
        startSession: (userId: string, response: HttpServerResponse.HttpServerResponse) =>
          Effect.gen(function* () {
            const started = yield* (yield* Sessions).start(userId)
            return withSessionCookie(response, hubPublic, started)
          })
      })
    ),
    { ...at(ports.hub), service: "hub", canonicalUrl: production ? undefined : hubPublic }
  ).pipe(Layer.provide(hubStart), Layer.provide(hub))

  const tasksWeb: TasksWebSignIn = {
    publicUrl: tasksUrl,
    hubIssuer: hubPublic,
    clientId: tasksOidcClientId,
    clientSecret: secrets.TASKS_OIDC_CLIENT_SECRET,
    secretsKey: reveal(secrets.TASKS_SECRETS_KEY),
    allowHttp: !production
  }
  const tasksListener = listen(tasksRoutes(settings, tasksWeb), {
    ...at(ports.tasks),
    service: "tasks",
    canonicalUrl: production ? undefined : tasksUrl,
    render: tasksRenderer
  }).pipe(
    Layer.provide(
      TasksEventRelay({
        hubUrl: urls.hub,
        signingKey: secrets.TASKS_SIGNING_KEY,
        pollMillis: config.eventRelayPollMillis,
        leaseMillis: config.eventRelayLeaseMillis,
        publisher: hubInProcess
      })
    ),
    Layer.provide(
      TasksSql({
        publicUrl: tasksUrl,
        machineKeys: config.tasksMachineKeys,
        records: TasksRecordStoreFromConfig(config, airtable)
      })
    ),
    Layer.provide(IdempotencyStoreSql("tasks"))
  )

  const metricsListener = Option.match(config.metricsPort, {
    onNone: () => Layer.empty,
    onSome: (port) => listen(PrometheusMetrics.layerHttp({ path: "/metrics" }), { ...at(port), service: "metrics" })
  })
  const listeners = Layer.mergeAll(hubListener, decisionsListener, tasksListener, metricsListener)

  return listeners.pipe(
    Layer.provide(
      Layer.mergeAll(
        ReadinessFromDatabase,
        TransactionsSql,
        analyzeEmbedded,
        RateLimitsFromStore.pipe(Layer.provide(rateLimitStore))
      )
    ),
    Layer.provide(migrations),
    // Beside the database, so that every TransactionsSql built over it groups shared units as configured.
    Layer.provideMerge(Layer.merge(database, Layer.succeed(SqlGroupCommit, config.sqlGroupCommit))),
    Layer.provide(telemetry(config))
  )
}

/**
 * The hub's OpenID settings. Its provider needs the hub's secrets key and a signing key (outside production
 * one is made when none is given), and registers the task inbox when TASKS_OIDC_CLIENT_SECRET is set.
 * Signing in with the organisation's provider needs HUB_OIDC_ISSUER, HUB_OIDC_CLIENT_ID and
 * HUB_OIDC_CLIENT_SECRET, and the hub's secrets key.
 */
const hubOpenIdSettings = (options: {
  readonly config: ServerConfig
  readonly secrets: Secrets
  readonly hubPublic: string
  readonly tasksUrl: string
  readonly production: boolean
  readonly signingKey: Redacted.Redacted<string> | undefined
}): HubOpenIdSettings => {
  const { config, secrets, production } = options
  const secretsKey = reveal(secrets.HUB_SECRETS_KEY)
  const signingKey = options.signingKey ?? (production ? undefined : Redacted.make(generateSigningKey()))
  const tasksSecret = secrets.TASKS_OIDC_CLIENT_SECRET
  const upstream = config.hubOidc
  return {
    provider:
      secretsKey === undefined || signingKey === undefined
        ? undefined
        : {
            issuer: options.hubPublic,
            signingKey,
            secretsKey,
            signInPath: "/",
            clients:
              tasksSecret === undefined
                ? []
                : [
                    {
                      clientId: tasksOidcClientId,
                      clientSecret: tasksSecret,
                      redirectUris: [`${options.tasksUrl}/auth/callback`]
                    }
                  ]
          },
    signIn:
      secretsKey === undefined ||
      Option.isNone(upstream.issuer) ||
      Option.isNone(upstream.clientId) ||
      Option.isNone(upstream.clientSecret)
        ? undefined
        : {
            hubUrl: options.hubPublic,
            issuer: upstream.issuer.value,
            clientId: upstream.clientId.value,
            clientSecret: upstream.clientSecret.value,
            secretsKey,
            allowHttp: !production
          }
  }
}
