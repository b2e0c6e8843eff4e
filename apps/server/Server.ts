import { Clock, Effect, Layer, Option, Redacted, Schedule } from "effect"
import { listen } from "../../adapters/http/ServiceHttp.ts"
import { IdempotencyStore } from "../../core/idempotency/IdempotencyStore.ts"
import { Readiness } from "../../core/kernel/index.ts"
import { Database } from "../../adapters/sql/Database.ts"
import { migrationsLayer } from "../../adapters/sql/Migrator.ts"
import { TransactionsSql } from "../../adapters/sql/TransactionsSql.ts"
import { IdempotencyStoreSql } from "../../adapters/sql/IdempotencyStoreSql.ts"
import { hubMigrations } from "../../adapters/sql/hub/migrations.ts"
import { tasksMigrations } from "../../adapters/sql/tasks/migrations.ts"
import type { PgClient } from "@effect/sql-pg"
import { SqlClient } from "effect/sql"
import type { CallerKeyStore } from "../../core/decisions/CallerKeyStore.ts"
import { Decisions } from "../../core/decisions/Decisions.ts"
import type { DecisionSignals } from "../../core/decisions/DecisionSignals.ts"
import type { DecisionStore } from "../../core/decisions/DecisionStore.ts"
import type { RoleStore } from "../../core/decisions/RoleStore.ts"
import { Templates } from "../../core/decisions/Templates.ts"
import { Webhooks } from "../../core/decisions/Webhooks.ts"
import type { WebhookStore } from "../../core/decisions/WebhookStore.ts"
import type { TemplateStore } from "../../core/decisions/TemplateStore.ts"
import { IdGeneratorUlid } from "../../core/kernel/Ids.ts"
import { decisionsMigrations } from "../../adapters/sql/decisions/migrations.ts"
import type { ServerConfig, Secrets } from "./Config.ts"
import { DecisionsWorkers, ExpirySweep } from "./DecisionsRuntime.ts"
import { RecordActions } from "../../core/decisions/RecordActions.ts"
import { WebhookDeliveries } from "../../core/decisions/WebhookDeliveries.ts"
import type { RecordStoreCredentials } from "../../core/decisions/RecordStoreCredentials.ts"
import type { WebhookOutbox } from "../../core/decisions/WebhookOutbox.ts"
import { RecordUpdaterAirtable } from "../../adapters/airtable/RecordUpdaterAirtable.ts"
import { WebhookSenderHttp } from "../../adapters/http/WebhookSenderHttp.ts"
import { decisionsRoutes, hubRoutes, tasksRoutes, type ServiceSettings } from "./Services.ts"
import { TasksEventRelay, TasksSql, tasksPublicUrl } from "./TasksRuntime.ts"
import { guardedLookup } from "../../adapters/http/WebhookSenderHttp.ts"
import { ServiceProbeHttp } from "../../adapters/http/ServiceProbeHttp.ts"
import { DirectorySql } from "../../adapters/sql/hub/DirectorySql.ts"
import { ServiceStoreWithKeyCacheSql } from "../../adapters/sql/hub/ServiceStoreWithKeyCacheSql.ts"
import { Conformance } from "../../core/hub/Conformance.ts"
import { seedFirstPartyCatalog } from "../../core/hub/FirstPartyCatalog.ts"
import { Identity } from "../../core/hub/Identity.ts"
import { IdentityTokens } from "../../core/hub/IdentityTokens.ts"
import { Registry } from "../../core/hub/Registry.ts"
import { FirstParty } from "./FirstParty.ts"
import { HubEventStoresSql, HubEventsLayer, HubWorkers } from "./HubEventsRuntime.ts"

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
  | IdempotencyStore,
  never,
  SqlClient.SqlClient | PgClient.PgClient | Database
>

export interface ServerOptions {
  readonly config: ServerConfig
  readonly secrets: Secrets
  readonly decisionsData: DecisionsData
  /** Ports to listen on; 0 picks a free one (tests). Defaults to the configured ports. */
  readonly ports?: { readonly hub: number; readonly decisions: number; readonly tasks: number } | undefined
}

const anyAddress = new Set(["0.0.0.0", "::", "[::]"])

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
 * The bundled server: the database (a Postgres server, or the embedded default under DATA_DIR), each
 * service's migrations, then one listener per service. Closing the layer stops the listeners first
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
    tasksSecretsKey: secrets.TASKS_SECRETS_KEY
  }
  const ports = options.ports ?? { hub: config.hubPort, decisions: config.decisionsPort, tasks: config.tasksPort }
  const at = (port: number) => ({ port, host: config.host, drainMillis: config.drainMillis })
  // How the services reach each other inside one bundled server: their own listeners, unless configured.
  const local = (port: number) => `http://${anyAddress.has(config.host) ? "127.0.0.1" : config.host}:${port}`
  const urls = {
    hub: Option.getOrElse(config.hubUrl, () => local(ports.hub)).replace(/\/+$/, ""),
    decisions: Option.getOrElse(config.decisionsUrl, () => local(ports.decisions)).replace(/\/+$/, ""),
    tasks: Option.getOrElse(config.tasksUrl, () => local(ports.tasks)).replace(/\/+$/, "")
  }

  const database = Database.layer({ url: Option.getOrUndefined(config.databaseUrl), dataDir: config.dataDir })
  const migrations = Layer.mergeAll(migrationsLayer("hub", hubMigrations), migrationsLayer("tasks", tasksMigrations))

  // Without a key to seal signing secrets, registering a webhook is refused (fail closed): see Webhooks.
  const webhooks = Webhooks.layer({
    secretsKey: secrets.DECISIONS_SECRETS_KEY,
    allowLoopbackHttp: !production
  })
  // Record actions and webhook deliveries (issue 4): sealed with the same key, sent by real adapters.
  const workers = Layer.merge(
    RecordActions.layer({ secretsKey: secrets.DECISIONS_SECRETS_KEY }),
    WebhookDeliveries.layer({
      secretsKey: secrets.DECISIONS_SECRETS_KEY,
      retrySchedule: config.webhookRetrySchedule,
      timeoutMs: config.webhookTimeoutMillis
    })
  ).pipe(
    Layer.provide(RecordUpdaterAirtable({ endpointUrl: config.recordStoreEndpointUrl })),
    Layer.provide(WebhookSenderHttp({ allowLoopback: !production }))
  )
  const decisions = Layer.mergeAll(Templates.layer, webhooks, workers).pipe(
    Layer.provideMerge(Decisions.layer),
    Layer.provideMerge(Layer.merge(options.decisionsData, IdGeneratorUlid))
  )
  const decisionsListener = listen(decisionsRoutes(settings), at(ports.decisions)).pipe(
    Layer.provide(
      Layer.mergeAll(ExpirySweep(config.expirySweepMillis), DecisionsWorkers(config.workerPollMillis), purgeIdempotency)
    ),
    Layer.provide(decisions),
    Layer.provide(migrationsLayer("decisions", decisionsMigrations))
  )

  // The hub (issue 6): directory, registry, events and notifications over the `hub` schema. Without
  // HUB_SECRETS_KEY the registry fails closed: nothing is registered and signed routes refuse.
  const hub = Layer.mergeAll(
    Identity.layer,
    IdentityTokens.layer({ issuer: config.platformIssuer }),
    Conformance.layer({ issuer: config.platformIssuer }).pipe(
      Layer.provide(ServiceProbeHttp({ allowLoopback: !production, guardLookup: guardedLookup }))
    ),
    HubEventsLayer({
      quota: { limit: config.hubEventsPerMinute, windowMillis: 60_000 },
      processor: { leaseMillis: config.hubEventLeaseMillis }
    })
  ).pipe(
    Layer.provideMerge(Registry.layer({ secretsKey: reveal(secrets.HUB_SECRETS_KEY), allowLoopbackHttp: !production })),
    Layer.provideMerge(
      Layer.mergeAll(
        DirectorySql,
        ServiceStoreWithKeyCacheSql,
        HubEventStoresSql,
        IdempotencyStoreSql("hub"),
        IdGeneratorUlid
      )
    )
  )
  // First-party services registered from configuration, then the catalog of their event types.
  const hubStart = Layer.mergeAll(
    HubWorkers(config.hubWorkerPollMillis, config.hubEmailBatchMillis),
    Layer.effectDiscard(seedFirstPartyCatalog).pipe(
      Layer.provide(
        FirstParty({
          decisionsBaseUrl: urls.decisions,
          tasksBaseUrl: urls.tasks,
          decisionsApiKey: secrets.DECISIONS_API_KEY,
          decisionsEmbedKey: secrets.DECISIONS_EMBED_KEY,
          tasksApiKey: secrets.TASKS_API_KEY,
          tasksSigningKey: secrets.TASKS_SIGNING_KEY,
          attempts: 30
        })
      )
    )
  )
  const hubListener = listen(
    hubRoutes(settings, {
      adminKey: secrets.HUB_ADMIN_KEY,
      contextKeys: config.hubContextKeys,
      callsPerMinute: config.hubCallsPerMinute
    }),
    at(ports.hub)
  ).pipe(Layer.provide(hubStart), Layer.provide(hub))

  const tasksListener = listen(tasksRoutes(settings), at(ports.tasks)).pipe(
    Layer.provide(
      TasksEventRelay({
        hubUrl: urls.hub,
        signingKey: secrets.TASKS_SIGNING_KEY,
        pollMillis: config.hubWorkerPollMillis
      })
    ),
    Layer.provide(TasksSql({ publicUrl: tasksPublicUrl(config, ports.tasks), machineKeys: config.tasksMachineKeys })),
    Layer.provide(IdempotencyStoreSql("tasks"))
  )

  const listeners = Layer.mergeAll(hubListener, decisionsListener, tasksListener)

  return listeners.pipe(
    Layer.provide(Layer.mergeAll(ReadinessFromDatabase, TransactionsSql, analyzeEmbedded)),
    Layer.provide(migrations),
    Layer.provideMerge(database)
  )
}
