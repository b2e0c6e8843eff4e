import { Layer, Redacted } from "effect"
import { staticAppRoutes } from "../../adapters/http/StaticApp.ts"
import { join } from "node:path"
import type { Secrets, ServerConfig } from "./Config.ts"

/** What every service's routes read of the configuration: the keys, budgets and build they answer with. */
export interface ServiceSettings {
  readonly production: boolean
  readonly build: string
  readonly platformIssuer: string
  readonly decisionsApiKey: Redacted.Redacted<string> | undefined
  readonly decisionsEmbedKey: Redacted.Redacted<string> | undefined
  readonly tasksApiKey: Redacted.Redacted<string> | undefined
  readonly decisionsCallerRequestsPerMinute: number
  readonly decisionsUserRequestsPerMinute: number
  /** Each service's secrets key; it also seals the responses kept for `Idempotency-Key` replays. */
  readonly hubSecretsKey: Redacted.Redacted<string> | undefined
  readonly decisionsSecretsKey: Redacted.Redacted<string> | undefined
  readonly tasksSecretsKey: Redacted.Redacted<string> | undefined
  /**
   * The keys the decisions service and the task inbox sign their events with (`DECISIONS_SIGNING_KEY`,
   * `TASKS_SIGNING_KEY`): the hub signs the facts it sends them with the same keys. Unset, facts are refused
   * (503) and wait at the hub.
   */
  readonly decisionsSigningKey?: Redacted.Redacted<string> | undefined
  readonly tasksSigningKey?: Redacted.Redacted<string> | undefined
  /** Where the built web apps are (`WEB_DIR`); unset, no web app is served (tests of the API alone). */
  readonly webDir?: string | undefined
  /**
   * Where people open the workspace (the hub's public address): the decisions service answers the address of
   * a decision's page there. Unset, its answers carry none.
   */
  readonly workspaceUrl?: string | undefined
  /** Where browsers reach the decisions service: its answer links' page checks its posts come from there. */
  readonly decisionsPublicUrl?: string | undefined
}

export const reveal = (secret: Redacted.Redacted<string> | undefined) =>
  secret === undefined ? undefined : Redacted.value(secret)

/** A built web app of `WEB_DIR` served at the service's `/`, or nothing when the settings name no directory. */
export const webApp = (settings: ServiceSettings, app: "workspace" | "tasks", meta?: Record<string, string>) =>
  settings.webDir === undefined ? Layer.empty : staticAppRoutes({ directory: join(settings.webDir, app), meta })

export const version = (service: string, build: string) => ({ service, contractVersion: "v1", build })

// Default request body limit. Decisions allow 32,768-character markdown bodies, which may be 4 bytes a char.
export const kib = 1024

/** The services' shared settings, from the configuration and the secrets. */
export const serviceSettingsOf = (config: ServerConfig, secrets: Secrets): ServiceSettings => ({
  production: config.environment === "production",
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
})

/** The three services a process may run (`SERVICES`). */
export const serviceNames = ["hub", "decisions", "tasks"] as const
export type ServiceName = (typeof serviceNames)[number]

/** Where each service is reached: by the other services (`internal`) and by people's browsers (`public`). */
export interface ServiceAddresses {
  readonly internal: { readonly hub: string; readonly decisions: string; readonly tasks: string }
  readonly public: { readonly hub: string; readonly decisions: string; readonly tasks: string }
}
