import { Context, type Effect } from "effect"

/**
 * The service registry: a developer
 * registers a service with a lowercase-letters-and-digits id, a display name and an https base URL, and
 * receives three credentials, each shown once. A new service starts in draft; an operator promotes it to
 * live only with a passing conformance report.
 */

export const ServiceStatuses = ["draft", "live", "suspended"] as const
export type ServiceStatus = (typeof ServiceStatuses)[number]

export const CredentialKinds = ["apiKey", "signingKey", "embedKey"] as const
export type CredentialKind = (typeof CredentialKinds)[number]

/**
 * The three credentials, each sealed at rest with `HUB_SECRETS_KEY` (core/auth/SecretBox.ts): the hub must
 * send the API key, verify events with the signing key and sign identity tokens with the embed key, so it
 * keeps them recoverable, never in the clear, and never returns them after the answer that issued them.
 */
export type SealedCredentials = Readonly<Record<CredentialKind, string>>

/** One check of a conformance run: what was asked, and whether the answer was right. */
export interface ConformanceCheck {
  readonly name: string
  readonly passed: boolean
  /** What was wrong, in our words (never the service's body). */
  readonly detail?: string | undefined
}

export interface ConformanceReport {
  readonly ranAt: string
  readonly passed: boolean
  readonly checks: ReadonlyArray<ConformanceCheck>
}

export interface RegisteredService {
  readonly id: string
  readonly displayName: string
  readonly baseUrl: string
  readonly status: ServiceStatus
  /** The header that carries the API key when the hub calls the service (AUTH-1), e.g. `X-Decisions-Api-Key`. */
  readonly apiKeyHeader: string
  /** A route of the service that needs the API key and an identity token; the conformance check probes it. */
  readonly resourcePath: string
  /** Registered by the bundled server's configuration rather than through the API. */
  readonly firstParty: boolean
  /** The service serves pages (`GET /api/v1/pages`, ...) that the workspace shows; absent means no. */
  readonly pages?: boolean
  /** Where the workspace opens the service full page (the hub adds `wt`); absent means it is not embeddable. */
  readonly embedUrl?: string
  /** The service's own web app, which the workspace links to; absent means it has none. */
  readonly appUrl?: string
  readonly createdAt: string
  readonly updatedAt: string
  /** Bumped by every save: the optimistic-concurrency guard of `ServiceStore.save`. */
  readonly version: number
  /**
   * The facts the service's manifest declares (`consumesFacts`), as its latest conformance check read them:
   * the hub sends it those facts while it is live. Absent: none.
   */
  readonly consumesFacts?: ReadonlyArray<string>
  /** The latest conformance report; null until the check has run. */
  readonly conformance: ConformanceReport | null
}

export interface StoredService {
  readonly service: RegisteredService
  readonly credentials: SealedCredentials
}

/**
 * The registry port. Infrastructure failures are defects. `save` replaces the whole row, guarded by
 * `version`: it answers false when the stored row changed since it was read (a concurrent rotation or
 * promotion), so no write is ever lost silently.
 */
export class ServiceStore extends Context.Service<
  ServiceStore,
  {
    /** Creates the service; `taken` when the id exists. */
    readonly create: (stored: StoredService) => Effect.Effect<"created" | "taken">
    readonly find: (id: string) => Effect.Effect<StoredService | undefined>
    readonly list: () => Effect.Effect<ReadonlyArray<RegisteredService>>
    /** Replaces the row when its stored `version` still equals `expectedVersion` (`stored` carries the next one). */
    readonly save: (stored: StoredService, expectedVersion: number) => Effect.Effect<boolean>
  }
>()("core/hub/ServiceStore") {}
