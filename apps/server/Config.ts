import { Config, Option, Redacted, Result, Schema } from "effect"
import { defaultRetrySchedule, parseRetrySchedule } from "../../core/decisions/WebhookDelivery.ts"
import { parseContextKeys } from "../../core/hub/ContextKeys.ts"
import { parseProviderProfiles } from "../../core/hub/ServiceDataProviders.ts"
import { parseMachineKeys } from "../../core/tasks/MachineKeys.ts"
import { Tables, type Table } from "../../core/tasks/RecordStore.ts"
import { defaultTableNames } from "../../adapters/airtable/AirtableFields.ts"

/** Every setting of the bundled server, read from environment variables only (ARCHITECTURE: Config in apps/server). */
export const SecretNames = [
  "HUB_ADMIN_KEY",
  "HUB_SECRETS_KEY",
  "HUB_VAPID_PRIVATE_KEY",
  "DECISIONS_API_KEY",
  "DECISIONS_EMBED_KEY",
  "DECISIONS_SECRETS_KEY",
  "DECISIONS_SIGNING_KEY",
  "TASKS_API_KEY",
  "TASKS_SIGNING_KEY",
  "TASKS_SECRETS_KEY",
  "TASKS_OIDC_CLIENT_SECRET"
] as const
export type SecretName = (typeof SecretNames)[number]

/** A secret is at least 16 characters without white space: a short or blank key is a mistake, refused at start. */
export const secretMinLength = 16
const SecretText = Schema.String.check(
  Schema.makeFilter(
    (text: string) =>
      (text.length >= secretMinLength && !/\s/.test(text)) ||
      `must be at least ${secretMinLength} characters without white space`
  )
)

const secret = (name: SecretName) => Config.option(Config.schema(SecretText, name).pipe(Config.map(Redacted.make)))

/** Seconds, comma-separated (core/decisions/WebhookDelivery.ts `parseRetrySchedule`). */
const RetrySchedule = Schema.String.check(
  Schema.makeFilter((text: string) => {
    const parsed = parseRetrySchedule(text)
    return Result.isSuccess(parsed) || parsed.failure
  })
)

/** `key:email:Name`, comma-separated (core/tasks/MachineKeys.ts); a refusal names the entry, never the key. */
const MachineKeysText = Schema.String.check(
  Schema.makeFilter((text: string) => {
    const parsed = parseMachineKeys(text)
    return Result.isSuccess(parsed) || parsed.failure
  })
)

/** An Airtable base id: `app` and 14 letters or digits. */
const BaseIdText = Schema.String.check(
  Schema.makeFilter(
    (text: string) => /^app[A-Za-z0-9]{14}$/.test(text) || "must be a base id: app and 14 letters or digits"
  )
)

/** `service-id:key`, comma-separated (core/hub/ContextKeys.ts); a refusal names the entry, never the key. */
const ContextKeysText = Schema.String.check(
  Schema.makeFilter((text: string) => {
    const parsed = parseContextKeys(text)
    return Result.isSuccess(parsed) || parsed.failure
  })
)

/** `service-id:provider+provider`, comma-separated (core/hub/ServiceDataProviders.ts). */
const ProviderProfilesText = Schema.String.check(
  Schema.makeFilter((text: string) => {
    const parsed = parseProviderProfiles(text)
    return Result.isSuccess(parsed) || parsed.failure
  })
)

export const ServerConfig = Config.all({
  environment: Config.Literals(["development", "test", "production"], "NODE_ENV").pipe(
    Config.withDefault("development" as const)
  ),
  /**
   * The services this process runs, comma-separated: `hub`, `decisions`, `tasks` (all three unless set). The
   * others are reached at HUB_URL, DECISIONS_URL and TASKS_URL; names are checked at start (StartChecks.ts).
   */
  services: Config.String("SERVICES").pipe(
    Config.withDefault("hub,decisions,tasks"),
    Config.map((text) =>
      text
        .split(",")
        .map((name) => name.trim())
        .filter((name) => name !== "")
    )
  ),
  host: Config.String("HOST").pipe(Config.withDefault("127.0.0.1")),
  hubPort: Config.Port("HUB_PORT").pipe(Config.withDefault(4000)),
  decisionsPort: Config.Port("DECISIONS_PORT").pipe(Config.withDefault(4001)),
  tasksPort: Config.Port("TASKS_PORT").pipe(Config.withDefault(4002)),
  /** Where people reach the task inbox: task links and short links. Default: http://HOST:TASKS_PORT. */
  tasksPublicUrl: Config.option(Config.URL("TASKS_PUBLIC_URL").pipe(Config.map((url) => url.toString()))),
  /** Operator machine keys, `key:email:Name`, comma-separated (core/tasks/MachineKeys.ts). */
  tasksMachineKeys: Config.schema(MachineKeysText, "TASKS_MACHINE_KEYS").pipe(
    Config.map(Redacted.make),
    Config.withDefault(Redacted.make(""))
  ),
  databaseUrl: Config.option(Config.Redacted("DATABASE_URL")),
  dataDir: Config.String("DATA_DIR").pipe(Config.withDefault("./data")),
  /**
   * A migrated, empty embedded database that a new DATA_DIR is copied from instead of being created and
   * migrated (adapters/sql/EmbeddedImage.ts); `npm start` sets it. Used only when made for these migrations.
   */
  embeddedImage: Config.option(Config.String("EMBEDDED_IMAGE")),
  /** Group commit of shared units of work (adapters/sql/TransactionsSql.ts); off only for debugging. */
  sqlGroupCommit: Config.Boolean("SQL_GROUP_COMMIT").pipe(Config.withDefault(true)),
  /**
   * Where every instance keeps the rate-limit budgets (`redis://` or `rediss://`); unset, they are kept in
   * DATABASE_URL's Postgres, or in memory on the embedded database (apps/server/RateLimitsRuntime.ts).
   */
  redisUrl: Config.option(Config.Redacted("REDIS_URL")),
  /** Prefixes every key this server writes to REDIS_URL, so several deployments can share one Redis. */
  redisKeyPrefix: Config.String("REDIS_KEY_PREFIX").pipe(Config.withDefault("hitl:rate-limits:")),
  /** The built web apps (`npm run build:web`), one directory per app. */
  webDir: Config.String("WEB_DIR").pipe(Config.withDefault("./node_modules/.cache/hitl-web")),
  platformIssuer: Config.NonEmptyString("PLATFORM_ISSUER").pipe(Config.withDefault("platform-hub")),
  logFormat: Config.Literals(["json", "pretty"], "LOG_FORMAT").pipe(Config.withDefault("json" as const)),
  logLevel: Config.LogLevel("LOG_LEVEL").pipe(Config.withDefault("Info" as const)),
  /** A listener of its own serving `GET /metrics` (Prometheus text) on HOST; none unless set. */
  metricsPort: Config.option(Config.Port("METRICS_PORT")),
  /** Where logs, traces and metrics are exported over OpenTelemetry (OTLP/HTTP JSON); none unless set. */
  otlpEndpoint: Config.option(
    Config.URL("OTEL_EXPORTER_OTLP_ENDPOINT").pipe(Config.map((url) => url.toString().replace(/\/$/, "")))
  ),
  otlpServiceName: Config.String("OTEL_SERVICE_NAME").pipe(Config.withDefault("hitl-platform")),
  drainMillis: Config.Int("SHUTDOWN_DRAIN_MS").pipe(Config.withDefault(10_000)),
  decisionsCallerRequestsPerMinute: Config.Int("DECISIONS_CALLER_RATE_LIMIT").pipe(Config.withDefault(600)),
  decisionsUserRequestsPerMinute: Config.Int("DECISIONS_USER_RATE_LIMIT").pipe(Config.withDefault(300)),
  expirySweepMillis: Config.Int("DECISIONS_EXPIRY_SWEEP_MS").pipe(Config.withDefault(1_000)),
  workerPollMillis: Config.Int("DECISIONS_WORKER_POLL_MS").pipe(Config.withDefault(1_000)),
  webhookRetrySchedule: Config.schema(RetrySchedule, "WEBHOOK_RETRY_SCHEDULE").pipe(
    Config.map((text) => Result.getOrThrow(parseRetrySchedule(text))),
    Config.withDefault(defaultRetrySchedule)
  ),
  webhookTimeoutMillis: Config.Int("WEBHOOK_TIMEOUT_MS").pipe(Config.withDefault(10_000)),
  recordStoreEndpointUrl: Config.URL("AIRTABLE_ENDPOINT_URL").pipe(
    Config.map((url) => url.toString()),
    Config.withDefault("https://api.airtable.com")
  ),
  /**
   * Where the task inbox keeps its records: `sql`, its own tables in the database (the default), or `airtable`,
   * the Airtable base AIRTABLE_BASE_ID reached with AIRTABLE_TOKEN (docs/airtable.md).
   */
  tasksRecordStore: Config.Literals(["sql", "airtable"], "TASKS_RECORD_STORE").pipe(Config.withDefault("sql" as const)),
  airtableToken: Config.option(Config.Redacted("AIRTABLE_TOKEN")),
  airtableBaseId: Config.option(Config.schema(BaseIdText, "AIRTABLE_BASE_ID")),
  /** The base's table for each of the task inbox's tables: AIRTABLE_TABLE_TASKS, ..._PROJECTS, and so on. */
  airtableTableNames: Config.all(
    Object.fromEntries(
      Tables.map((table) => [
        table,
        Config.NonEmptyString(`AIRTABLE_TABLE_${table.toUpperCase()}`).pipe(
          Config.withDefault(defaultTableNames[table])
        )
      ])
    ) as { readonly [T in Table]: Config.Config<string> }
  ),
  /** Where the hub reaches the first-party services, and where they reach the hub. Default: their listeners. */
  hubUrl: Config.option(Config.URL("HUB_URL").pipe(Config.map((url) => url.toString()))),
  decisionsUrl: Config.option(Config.URL("DECISIONS_URL").pipe(Config.map((url) => url.toString()))),
  tasksUrl: Config.option(Config.URL("TASKS_URL").pipe(Config.map((url) => url.toString()))),
  /**
   * Where people's browsers reach the hub: the issuer of its OpenID provider, the base of its sign-in
   * callbacks and of the links in notification emails, chat messages and pushes. Default: HUB_URL, else the
   * hub's listener.
   */
  hubPublicUrl: Config.option(Config.URL("HUB_PUBLIC_URL").pipe(Config.map((url) => url.toString()))),
  /** The organisation's identity provider, where people may sign in to the hub (docs/sign-in.md). */
  hubOidc: Config.all({
    issuer: Config.option(Config.URL("HUB_OIDC_ISSUER").pipe(Config.map((url) => url.toString()))),
    clientId: Config.option(Config.NonEmptyString("HUB_OIDC_CLIENT_ID")),
    clientSecret: Config.option(Config.Redacted("HUB_OIDC_CLIENT_SECRET"))
  }),
  /**
   * The private key (PEM, RSA or EC P-256) that signs the ID tokens of the hub's own OpenID provider. Outside
   * production one is generated and kept under DATA_DIR; in production, unset, the provider is off (501).
   */
  hubOidcSigningKey: Config.option(
    // On one line (an environment file), its line breaks may be written `\n`.
    Config.String("HUB_OIDC_SIGNING_KEY").pipe(Config.map((pem) => Redacted.make(pem.replace(/\\n/g, "\n"))))
  ),
  /** AUTH-6 context keys of the callers of subject context; unset, subject context answers 501. */
  hubContextKeys: Config.schema(ContextKeysText, "HUB_CONTEXT_KEYS").pipe(
    Config.map((text) => Result.getOrThrow(parseContextKeys(text))),
    Config.withDefault(Result.getOrThrow(parseContextKeys(undefined)))
  ),
  /**
   * The expert-sessions roster that `GET /api/v1/service-data/matched-clients` reads (with the secret
   * HUB_EXPERT_ROSTER_KEY); unset, every engineer has no matched clients.
   */
  hubExpertRosterUrl: Config.option(Config.URL("HUB_EXPERT_ROSTER_URL").pipe(Config.map((url) => url.toString()))),
  /** The roster's internal key: an upstream's secret, so never generated (unset, the roster is not read). */
  hubExpertRosterKey: Config.option(Config.schema(SecretText, "HUB_EXPERT_ROSTER_KEY").pipe(Config.map(Redacted.make))),
  /** Which service-data providers each caller may use; unset, the defaults (docs/hub.md). */
  hubProviderProfiles: Config.schema(ProviderProfilesText, "HUB_PROVIDER_PROFILES").pipe(
    Config.map((text) => Result.getOrThrow(parseProviderProfiles(text))),
    Config.withDefault(Result.getOrThrow(parseProviderProfiles(undefined)))
  ),
  /** An external link shortener for `POST /api/v1/service-data/short-link`; unset, the hub's own `/s/{code}`. */
  hubShortenerUrl: Config.option(Config.URL("HUB_SHORTENER_URL").pipe(Config.map((url) => url.toString()))),
  /** Per-service quota of event deliveries, and per-caller quota of the hub's signed routes, a minute. */
  hubEventsPerMinute: Config.Int("HUB_EVENTS_PER_MINUTE").pipe(Config.withDefault(600)),
  hubCallsPerMinute: Config.Int("HUB_CALLS_PER_MINUTE").pipe(Config.withDefault(600)),
  /**
   * How often the decisions service and the task inbox look in their event outboxes for events to send to
   * the hub (docs/notifications.md, "What services emit").
   */
  eventRelayPollMillis: Config.Int("EVENT_RELAY_POLL_MS").pipe(Config.withDefault(1_000)),
  /** How long a relayed event is held by the relay that claimed it (default 5 minutes). */
  eventRelayLeaseMillis: Config.Int("EVENT_RELAY_LEASE_MS").pipe(Config.withDefault(5 * 60_000)),
  /** How often the hub's event processor looks for accepted events (it is also woken by each accept). */
  hubWorkerPollMillis: Config.Int("HUB_WORKER_POLL_MS").pipe(Config.withDefault(1_000)),
  /**
   * How long a processor holds an accepted event it claimed: if its server dies, another (or the same after
   * a restart) processes the event once this has passed. Longer than any processing takes.
   */
  hubEventLeaseMillis: Config.Int("HUB_EVENT_LEASE_MS").pipe(Config.withDefault(60_000)),
  /** A hub session ends after this long without a request, and this long after sign-in whatever the use. */
  hubSessionIdleMinutes: Config.Int("HUB_SESSION_IDLE_MINUTES").pipe(Config.withDefault(720)),
  hubSessionMaxHours: Config.Int("HUB_SESSION_MAX_HOURS").pipe(Config.withDefault(168)),
  /** How long an emailed sign-in link works, in minutes (at most 15). */
  hubSignInLinkMinutes: Config.schema(
    Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 15 })),
    "HUB_SIGN_IN_LINK_MINUTES"
  ).pipe(Config.withDefault(15)),
  /**
   * Sign-in links one client address may ask for one address, and for any addresses, per 15 minutes (all
   * instances together).
   */
  hubSignInPerAddress: Config.Int("HUB_SIGN_IN_PER_ADDRESS").pipe(Config.withDefault(5)),
  hubSignInPerClient: Config.Int("HUB_SIGN_IN_PER_CLIENT").pipe(Config.withDefault(30)),
  /** Emailed sign-in links one person is sent per hour at most, whoever asks (requests past it send nothing). */
  hubSignInLinksPerHour: Config.schema(
    Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 20 })),
    "HUB_SIGN_IN_LINKS_PER_HOUR"
  ).pipe(Config.withDefault(3)),
  /** How long a viewer link (for the meeting-recaps service) works, in hours. */
  hubViewerLinkHours: Config.Int("HUB_VIEWER_LINK_HOURS").pipe(Config.withDefault(72)),
  /** How long a person's email digest waits for more notifications: one email per person per interval. */
  hubEmailBatchMillis: Config.Int("HUB_EMAIL_BATCH_MS").pipe(Config.withDefault(300_000)),
  /** Seconds before each retry of a notification delivery (email, chat, push), comma-separated. */
  hubDeliveryRetrySchedule: Config.schema(RetrySchedule, "HUB_DELIVERY_RETRY_SCHEDULE").pipe(
    Config.map((text) => Result.getOrThrow(parseRetrySchedule(text))),
    Config.withDefault(defaultRetrySchedule)
  ),
  /**
   * Seconds between attempts at a fact a service did not accept, comma-separated; the last wait repeats until
   * the service accepts the fact (docs/hub.md, "Facts").
   */
  hubFactRetrySchedule: Config.schema(RetrySchedule, "HUB_FACT_RETRY_SCHEDULE").pipe(
    Config.map((text) => Result.getOrThrow(parseRetrySchedule(text))),
    Config.withDefault(defaultRetrySchedule)
  ),
  /**
   * Web push (VAPID): the key pair's public half and who runs the server (`mailto:` or https). The private
   * half is the secret HUB_VAPID_PRIVATE_KEY; the public one is derived from it when unset.
   */
  hubVapidPublicKey: Config.option(Config.NonEmptyString("HUB_VAPID_PUBLIC_KEY")),
  hubVapidSubject: Config.NonEmptyString("HUB_VAPID_SUBJECT").pipe(Config.withDefault("mailto:admin@localhost")),
  /**
   * The mail server of sign-in links and notification emails, `smtp://user:pass@host:port` (or `smtps://`).
   * Unset outside production, messages are written to the log instead; unset in production, nothing is sent.
   */
  smtpUrl: Config.option(Config.Redacted("SMTP_URL")),
  /** The sender of every email, `Name <address>` or an address. */
  smtpFrom: Config.NonEmptyString("SMTP_FROM").pipe(Config.withDefault("Platform <no-reply@localhost>")),
  build: Config.String("BUILD_ID").pipe(Config.withDefault("dev")),
  secrets: Config.all({
    HUB_ADMIN_KEY: secret("HUB_ADMIN_KEY"),
    HUB_SECRETS_KEY: secret("HUB_SECRETS_KEY"),
    HUB_VAPID_PRIVATE_KEY: secret("HUB_VAPID_PRIVATE_KEY"),
    DECISIONS_API_KEY: secret("DECISIONS_API_KEY"),
    DECISIONS_EMBED_KEY: secret("DECISIONS_EMBED_KEY"),
    DECISIONS_SECRETS_KEY: secret("DECISIONS_SECRETS_KEY"),
    DECISIONS_SIGNING_KEY: secret("DECISIONS_SIGNING_KEY"),
    TASKS_API_KEY: secret("TASKS_API_KEY"),
    TASKS_SIGNING_KEY: secret("TASKS_SIGNING_KEY"),
    TASKS_SECRETS_KEY: secret("TASKS_SECRETS_KEY"),
    TASKS_OIDC_CLIENT_SECRET: secret("TASKS_OIDC_CLIENT_SECRET")
  })
})

export type ServerConfig = typeof ServerConfig extends Config.Config<infer A> ? A : never

export type Secrets = Record<SecretName, Redacted.Redacted<string> | undefined>

export const presentSecrets = (config: ServerConfig): Secrets =>
  Object.fromEntries(SecretNames.map((name) => [name, Option.getOrUndefined(config.secrets[name])])) as Secrets
