import { Config, Option, Redacted, Result, Schema } from "effect"
import { defaultRetrySchedule, parseRetrySchedule } from "../../core/decisions/WebhookDelivery.ts"
import { parseContextKeys } from "../../core/hub/ContextKeys.ts"
import { parseMachineKeys } from "../../core/tasks/MachineKeys.ts"

/** Every setting of the bundled server, read from environment variables only (ARCHITECTURE: Config in apps/server). */
export const SecretNames = [
  "HUB_ADMIN_KEY",
  "HUB_SECRETS_KEY",
  "DECISIONS_API_KEY",
  "DECISIONS_EMBED_KEY",
  "DECISIONS_SECRETS_KEY",
  "TASKS_API_KEY",
  "TASKS_SIGNING_KEY",
  "TASKS_SECRETS_KEY"
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

/** `service-id:key`, comma-separated (core/hub/ContextKeys.ts); a refusal names the entry, never the key. */
const ContextKeysText = Schema.String.check(
  Schema.makeFilter((text: string) => {
    const parsed = parseContextKeys(text)
    return Result.isSuccess(parsed) || parsed.failure
  })
)

export const ServerConfig = Config.all({
  environment: Config.Literals(["development", "test", "production"], "NODE_ENV").pipe(
    Config.withDefault("development" as const)
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
  platformIssuer: Config.NonEmptyString("PLATFORM_ISSUER").pipe(Config.withDefault("platform-hub")),
  logFormat: Config.Literals(["json", "pretty"], "LOG_FORMAT").pipe(Config.withDefault("json" as const)),
  logLevel: Config.LogLevel("LOG_LEVEL").pipe(Config.withDefault("Info" as const)),
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
  /** Where the hub reaches the first-party services, and where they reach the hub. Default: their listeners. */
  hubUrl: Config.option(Config.URL("HUB_URL").pipe(Config.map((url) => url.toString()))),
  decisionsUrl: Config.option(Config.URL("DECISIONS_URL").pipe(Config.map((url) => url.toString()))),
  tasksUrl: Config.option(Config.URL("TASKS_URL").pipe(Config.map((url) => url.toString()))),
  /** AUTH-6 context keys of the callers of subject context; unset, subject context answers 501. */
  hubContextKeys: Config.schema(ContextKeysText, "HUB_CONTEXT_KEYS").pipe(
    Config.map((text) => Result.getOrThrow(parseContextKeys(text))),
    Config.withDefault(Result.getOrThrow(parseContextKeys(undefined)))
  ),
  /** Per-service quota of event deliveries, and per-caller quota of the hub's signed routes, a minute. */
  hubEventsPerMinute: Config.Int("HUB_EVENTS_PER_MINUTE").pipe(Config.withDefault(600)),
  hubCallsPerMinute: Config.Int("HUB_CALLS_PER_MINUTE").pipe(Config.withDefault(600)),
  /** How often the hub's event processor looks for accepted events (it is also woken by each accept). */
  hubWorkerPollMillis: Config.Int("HUB_WORKER_POLL_MS").pipe(Config.withDefault(1_000)),
  /**
   * How long a processor holds an accepted event it claimed: if its server dies, another (or the same after
   * a restart) processes the event once this has passed. Longer than any processing takes.
   */
  hubEventLeaseMillis: Config.Int("HUB_EVENT_LEASE_MS").pipe(Config.withDefault(60_000)),
  /** How often a user's pending notification emails go out, as one email. */
  hubEmailBatchMillis: Config.Int("HUB_EMAIL_BATCH_MS").pipe(Config.withDefault(300_000)),
  build: Config.String("BUILD_ID").pipe(Config.withDefault("dev")),
  secrets: Config.all({
    HUB_ADMIN_KEY: secret("HUB_ADMIN_KEY"),
    HUB_SECRETS_KEY: secret("HUB_SECRETS_KEY"),
    DECISIONS_API_KEY: secret("DECISIONS_API_KEY"),
    DECISIONS_EMBED_KEY: secret("DECISIONS_EMBED_KEY"),
    DECISIONS_SECRETS_KEY: secret("DECISIONS_SECRETS_KEY"),
    TASKS_API_KEY: secret("TASKS_API_KEY"),
    TASKS_SIGNING_KEY: secret("TASKS_SIGNING_KEY"),
    TASKS_SECRETS_KEY: secret("TASKS_SECRETS_KEY")
  })
})

export type ServerConfig = typeof ServerConfig extends Config.Config<infer A> ? A : never

export type Secrets = Record<SecretName, Redacted.Redacted<string> | undefined>

export const presentSecrets = (config: ServerConfig): Secrets =>
  Object.fromEntries(SecretNames.map((name) => [name, Option.getOrUndefined(config.secrets[name])])) as Secrets
