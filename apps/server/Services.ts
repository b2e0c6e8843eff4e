import { Effect, Layer, Redacted } from "effect"
import { consumedFacts, FactIntake } from "../../core/events/FactIntake.ts"
import { RecordStore } from "../../core/tasks/RecordStore.ts"
import { DecisionsApi } from "../../adapters/http/decisions/Api.ts"
import { CallerBudget } from "../../adapters/http/decisions/CallerBudget.ts"
import { CallerAuthLayer, WorkspaceAuthLayer } from "../../adapters/http/decisions/AuthLayers.ts"
import {
  DecisionsHandlers,
  DecisionsUniformHandlers,
  WorkspaceAddress
} from "../../adapters/http/decisions/Handlers.ts"
import { IdempotencyLayers } from "../../adapters/http/IdempotencyLayers.ts"
import { HubApi } from "../../adapters/http/hub/Api.ts"
import { HubContractApi } from "../../adapters/http/hub/ContractDocument.ts"
import { HubHandlers } from "../../adapters/http/hub/Handlers.ts"
import type { ProviderProfiles } from "../../core/hub/ServiceDataProviders.ts"
import type { EmailSignInHttpConfig } from "../../adapters/http/hub/SignInHandlers.ts"
import { oidcSignInRoutes, type OidcSignInOptions, type StartHubSession } from "../../adapters/http/hub/OidcSignIn.ts"
import {
  openIdProviderRoutes,
  type HubPersonOf,
  type OpenIdProviderOptions
} from "../../adapters/http/hub/OpenIdProvider.ts"
import { oidcArtifactsSql } from "../../adapters/sql/hub/OidcArtifactsSql.ts"
import { serviceRoutes } from "../../adapters/http/ServiceHttp.ts"
import { TasksApi } from "../../adapters/http/tasks/Api.ts"
import { TasksApiAuthLayer, TasksSessionAuthLayer } from "../../adapters/http/tasks/AuthLayers.ts"
import { TasksHandlers, TasksUniformHandlers } from "../../adapters/http/tasks/Handlers.ts"
import { TasksSignInHandlers, type TasksWebSignIn } from "../../adapters/http/tasks/SignIn.ts"
import { tasksError, tasksRenderer } from "../../adapters/http/tasks/TasksErrors.ts"
import type { ErrorRenderer } from "../../adapters/http/ErrorResponse.ts"
import { decisionsMcpRoutes } from "../../adapters/mcp/DecisionsMcp.ts"
import { answerRoutes } from "../../adapters/http/decisions/AnswerRoutes.ts"
import { DecisionsServiceKeyLayer, TasksServiceKeyLayer } from "../../adapters/http/uniform/ServiceKeyLayer.ts"
import type { ContextKeys } from "../../core/hub/ContextKeys.ts"
import type { Manifest } from "../../core/kernel/index.ts"
import { staticAppRoutes } from "../../adapters/http/StaticApp.ts"
import { join } from "node:path"

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

const reveal = (secret: Redacted.Redacted<string> | undefined) =>
  secret === undefined ? undefined : Redacted.value(secret)

/** What only the hub's routes need. */
export interface HubSettings {
  /** `HUB_ADMIN_KEY`; unset, the operator plane answers 501. */
  readonly adminKey: Redacted.Redacted<string> | undefined
  /** `HUB_CONTEXT_KEYS`, parsed. */
  readonly contextKeys: ContextKeys
  /** `HUB_CALLS_PER_MINUTE`: per-caller quota of subject context and registry authorize. */
  readonly callsPerMinute: number
  /** The organisation's identity provider is configured: the workspace's sign-in page offers it. */
  readonly signInWithProvider?: boolean | undefined
  /** Email sign-in: the hub's public address and the budgets of links per address and per client. */
  readonly signIn: EmailSignInHttpConfig
  /** `HUB_PROVIDER_PROFILES`, parsed: which service-data providers each caller may use. */
  readonly providerProfiles?: ProviderProfiles | undefined
}

/** The task inbox's client id at the hub's OpenID provider. */
export const tasksOidcClientId = "tasks"

/** A built web app of `WEB_DIR` served at the service's `/`, or nothing when the settings name no directory. */
const webApp = (settings: ServiceSettings, app: "workspace" | "tasks", meta?: Record<string, string>) =>
  settings.webDir === undefined ? Layer.empty : staticAppRoutes({ directory: join(settings.webDir, app), meta })

const version = (service: string, build: string) => ({ service, contractVersion: "v1", build })

// Default request body limit. Decisions allow 32,768-character markdown bodies, which may be 4 bytes a char.
const kib = 1024

export const hubManifest: Manifest = {
  service: "hub",
  displayName: "Platform hub",
  tagline: "Sign-in, service registry, events, notifications and identity for every service",
  contractVersion: "v1",
  requiredTier: "free"
}

export const decisionsManifest: Manifest = {
  service: "decisions",
  displayName: "Decisions",
  tagline: "Human-in-the-loop decisions that agents and services post and people answer",
  contractVersion: "v1",
  requiredTier: "free",
  workspaceRoute: "/decisions",
  capabilities: {
    summary: true,
    activity: true,
    search: true,
    notifications: true,
    deepLinks: true,
    pages: true,
    embed: null
  },
  emittedEvents: ["decisions.notification.created"],
  consumesFacts: consumedFacts
}

export const tasksManifest: Manifest = {
  service: "tasks",
  displayName: "Task inbox",
  tagline: "Tasks, triage and AI-suggested proposals over your record store",
  contractVersion: "v1",
  requiredTier: "free",
  workspaceRoute: "/tasks",
  capabilities: { notifications: true, deepLinks: true, embed: null },
  emittedEvents: ["tasks.notification.created"],
  consumesFacts: consumedFacts
}

/**
 * Requires the hub's use cases and ports (Directory, Registry, Identity, IdentityTokens, Conformance, the
 * event ports), its IdempotencyStore, Transactions and Readiness.
 */
export const hubRoutes = (settings: ServiceSettings, hub: HubSettings) =>
  serviceRoutes({
    api: HubApi,
    handlers: HubHandlers({
      manifest: hubManifest,
      version: version("hub", settings.build),
      issuer: settings.platformIssuer,
      adminKey: hub.adminKey,
      contextKeys: hub.contextKeys,
      callsPerMinute: hub.callsPerMinute,
      signIn: hub.signIn,
      providerProfiles: hub.providerProfiles
    }),
    errors: { dialect: "hub", maxBodyBytes: 64 * kib },
    // The whole contract in one document: the hub's routes and the uniform service contract.
    document: HubContractApi
  }).pipe(
    Layer.provide(IdempotencyLayers({ dialect: "hub", secretsKey: reveal(settings.hubSecretsKey) })),
    // The workspace: the web app people use the platform through, at `/`.
    Layer.merge(
      webApp(settings, "workspace", hub.signInWithProvider === true ? { "hitl-sign-in-provider": "true" } : {})
    )
  )

/** Requires the decisions use cases (`Decisions`), an IdempotencyStore for the `decisions` schema, and Readiness. */
export const decisionsRoutes = (settings: ServiceSettings) => {
  const auth = {
    production: settings.production,
    apiKey: settings.decisionsApiKey,
    embedKey: settings.decisionsEmbedKey,
    issuer: settings.platformIssuer,
    callerRequestsPerMinute: settings.decisionsCallerRequestsPerMinute,
    userRequestsPerMinute: settings.decisionsUserRequestsPerMinute
  }
  const http = serviceRoutes({
    api: DecisionsApi,
    handlers: Layer.mergeAll(
      DecisionsUniformHandlers({ manifest: decisionsManifest, version: version("decisions", settings.build) }).pipe(
        Layer.provide(FactIntake.layer({ signingKey: reveal(settings.decisionsSigningKey) }))
      ),
      DecisionsHandlers
    ).pipe(Layer.provide(Layer.succeed(WorkspaceAddress, settings.workspaceUrl))),
    errors: { dialect: "decisions", maxBodyBytes: 256 * kib }
  }).pipe(
    Layer.provide(
      Layer.mergeAll(
        DecisionsServiceKeyLayer({ key: settings.decisionsApiKey, production: settings.production }),
        CallerAuthLayer(auth),
        WorkspaceAuthLayer(auth),
        IdempotencyLayers({ dialect: "decisions", secretsKey: reveal(settings.decisionsSecretsKey) })
      )
    )
  )
  // The MCP server at /mcp, behind the caller plane's key and its one budget.
  return Layer.mergeAll(
    http,
    // The page of the answer links notifications carry, at /answer: the link's token is its credential.
    settings.decisionsPublicUrl === undefined
      ? Layer.empty
      : answerRoutes({ publicUrl: settings.decisionsPublicUrl, workspaceUrl: settings.workspaceUrl }),
    decisionsMcpRoutes({
      build: settings.build,
      secretsKey: reveal(settings.decisionsSecretsKey),
      workspaceUrl: settings.workspaceUrl
    })
  ).pipe(Layer.provide(CallerBudget.layer(settings.decisionsCallerRequestsPerMinute)))
}

/**
 * Requires the task inbox use cases (`Tasks`), its RecordStore, IdempotencyStore, Transactions and Readiness.
 * Errors in the task inbox's own `{error}` shape. `web`: how people sign in on the web (through the hub).
 */
export const tasksRoutes = (settings: ServiceSettings, web: TasksWebSignIn) =>
  serviceRoutes({
    api: TasksApi,
    handlers: Layer.mergeAll(
      TasksUniformHandlers({ manifest: tasksManifest, version: version("tasks", settings.build) }).pipe(
        Layer.provide(FactIntake.layer({ signingKey: reveal(settings.tasksSigningKey) }))
      ),
      TasksHandlers,
      TasksSignInHandlers(web)
    ),
    errors: { dialect: "hub", maxBodyBytes: 64 * kib, render: tasksRenderer }
  }).pipe(
    Layer.provide(
      Layer.mergeAll(
        TasksServiceKeyLayer({ key: settings.tasksApiKey, production: settings.production }),
        TasksApiAuthLayer({ publicUrl: web.publicUrl }),
        TasksSessionAuthLayer,
        // A task's or a proposal's create writes only its record: it may share its transaction when the record
        // store's writes are part of the unit (RecordStoreSql), never over a store outside the database.
        Layer.unwrap(
          Effect.map(RecordStore, (records) =>
            IdempotencyLayers({
              dialect: "hub",
              secretsKey: reveal(settings.tasksSecretsKey),
              render: tasksIdempotencyRender,
              sharedCreates: records.inUnits
            })
          )
        )
      )
    ),
    // The task inbox's own web app, at `/`; it links back to the hub's workspace (and its settings).
    Layer.merge(webApp(settings, "tasks", { "hitl-workspace-url": `${web.hubIssuer.replace(/\/+$/, "")}/` }))
  )

/** The task inbox answers a reused Idempotency-Key as its other conflicts: 409 with `{error}`. */
const tasksIdempotencyRender: ErrorRenderer = (request, failure) =>
  failure.code === "CONFLICT" ? tasksError(409, failure.message ?? "Conflict") : tasksRenderer(request, failure)

/** OpenID Connect at the hub: as the first-party apps' provider, and as a client of the organisation's one. */
export interface HubOpenIdSettings {
  /** Unset (no signing key, or no secrets key, in production): the provider's routes answer 501. */
  readonly provider: OpenIdProviderOptions | undefined
  /** Unset (HUB_OIDC_* incomplete): `/auth/oidc` answers 501. */
  readonly signIn: OidcSignInOptions | undefined
}

/**
 * The hub's OpenID routes. `personOf` and `startSession` come from the hub's sessions. Requires the
 * Directory and the SQL client (the provider's artifacts).
 */
export const hubOpenIdRoutes = <R1, R2>(
  settings: HubOpenIdSettings,
  people: { readonly personOf: HubPersonOf<R1>; readonly startSession: StartHubSession<R2> }
) =>
  Layer.merge(
    openIdProviderRoutes(settings.provider, people.personOf, oidcArtifactsSql),
    oidcSignInRoutes(settings.signIn, people.startSession)
  )
