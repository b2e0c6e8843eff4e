import { Layer, type Redacted } from "effect"
import { HubApi } from "../../../adapters/http/hub/Api.ts"
import { HubContractApi } from "../../../adapters/http/hub/ContractDocument.ts"
import { HubHandlers } from "../../../adapters/http/hub/Handlers.ts"
import type { EmailSignInHttpConfig } from "../../../adapters/http/hub/SignInHandlers.ts"
import {
  oidcSignInRoutes,
  type OidcSignInOptions,
  type StartHubSession
} from "../../../adapters/http/hub/OidcSignIn.ts"
import {
  openIdProviderRoutes,
  type HubPersonOf,
  type OpenIdProviderOptions
} from "../../../adapters/http/hub/OpenIdProvider.ts"
import { IdempotencyLayers } from "../../../adapters/http/IdempotencyLayers.ts"
import { serviceRoutes } from "../../../adapters/http/ServiceHttp.ts"
import { oidcArtifactsSql } from "../../../adapters/sql/hub/OidcArtifactsSql.ts"
import type { ContextKeys } from "../../../core/hub/ContextKeys.ts"
import type { ProviderProfiles } from "../../../core/hub/ServiceDataProviders.ts"
import type { Manifest } from "../../../core/kernel/index.ts"
import { kib, reveal, version, webApp, type ServiceSettings } from "../Services.ts"

/** What only the hub's routes need. */
export interface HubRouteSettings {
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

export const hubManifest: Manifest = {
  service: "hub",
  displayName: "Platform hub",
  tagline: "Sign-in, service registry, events, notifications and identity for every service",
  contractVersion: "v1",
  requiredTier: "free"
}

/**
 * Requires the hub's use cases and ports (Directory, Registry, Identity, IdentityTokens, Conformance, the
 * event ports), its IdempotencyStore, Transactions and Readiness.
 */
export const hubRoutes = (settings: ServiceSettings, hub: HubRouteSettings) =>
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
