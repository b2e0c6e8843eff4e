import { Effect, Layer, type Redacted } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import type { ContextKeys } from "../../../core/hub/ContextKeys.ts"
import type { ProviderProfiles } from "../../../core/hub/ServiceDataProviders.ts"
import { uniformHandlers, type UniformConfig } from "../uniform/UniformHandlers.ts"
import { HubAdminAuthLayer } from "./AdminAuth.ts"
import { AdminHandlers } from "./AdminHandlers.ts"
import { HubApi } from "./Api.ts"
import { conformanceHandlers } from "./ConformanceHandlers.ts"
import { SubjectContextHandlers } from "./ContextHandlers.ts"
import { EventsHandlers } from "./EventsHandlers.ts"
import { MyNotificationsHandlers } from "./NotificationsHandlers.ts"
import { OrgChannelsHandlers } from "./OrgChannelsHandlers.ts"
import { HubPersonAuthLayer } from "./PersonAuth.ts"
import { RegistryAuthorizeHandlers } from "./RegistryHandlers.ts"
import { ServiceDataHandlers } from "./ServiceDataHandlers.ts"
import { EmailSignInHandlers, MeHandlers, ViewerLinkHandlers, type EmailSignInHttpConfig } from "./SignInHandlers.ts"
import { WorkspaceHandlers } from "./WorkspaceHandlers.ts"

export const HubUniformHandlers = (config: UniformConfig) =>
  HttpApiBuilder.group(HubApi, "uniform", (handlers) =>
    Effect.map(uniformHandlers(config), (h) => handlers.handleAll(h))
  )

export interface HubHttpConfig extends UniformConfig {
  /** `PLATFORM_ISSUER`: the `iss` of identity tokens the hub mints and verifies. */
  readonly issuer: string
  /** `HUB_ADMIN_KEY`; unset, the operator plane answers 501. */
  readonly adminKey: Redacted.Redacted<string> | undefined
  /** `HUB_CONTEXT_KEYS`, parsed; without keys subject context answers 501. */
  readonly contextKeys: ContextKeys
  /** Per-caller quota of the signed routes (subject context, registry authorize), a minute. */
  readonly callsPerMinute: number
  /** Email sign-in: the hub's public address and the per-address and per-client budgets of links. */
  readonly signIn: EmailSignInHttpConfig
  /** `HUB_PROVIDER_PROFILES`, parsed; the defaults when unset. */
  readonly providerProfiles?: ProviderProfiles | undefined
}

/** Every group of the hub's contract, with its middleware. A new layer per call (layers memoize by identity). */
export const HubHandlers = (config: HubHttpConfig) =>
  Layer.mergeAll(
    HubUniformHandlers(config),
    EventsHandlers,
    SubjectContextHandlers({ contextKeys: config.contextKeys, requestsPerMinute: config.callsPerMinute }),
    RegistryAuthorizeHandlers({ issuer: config.issuer, requestsPerMinute: config.callsPerMinute }),
    AdminHandlers(HubApi, { issuer: config.issuer }),
    HttpApiBuilder.group(HubApi, "conformance", (handlers) =>
      Effect.map(conformanceHandlers, (h) => handlers.handleAll(h))
    ),
    EmailSignInHandlers(config.signIn),
    MeHandlers,
    MyNotificationsHandlers,
    OrgChannelsHandlers,
    ViewerLinkHandlers({ contextKeys: config.contextKeys, requestsPerMinute: config.callsPerMinute }),
    ServiceDataHandlers({
      contextKeys: config.contextKeys,
      requestsPerMinute: config.callsPerMinute,
      publicUrl: config.signIn.publicUrl,
      providerProfiles: config.providerProfiles
    }),
    WorkspaceHandlers
  ).pipe(
    Layer.provide(
      Layer.merge(
        HubAdminAuthLayer({ adminKey: config.adminKey }),
        HubPersonAuthLayer({ publicUrl: config.signIn.publicUrl })
      )
    )
  )
