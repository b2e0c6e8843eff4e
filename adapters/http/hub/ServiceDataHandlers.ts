import { Effect, Layer, Option } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import type { ContextKeys, KeyedCaller } from "../../../core/hub/ContextKeys.ts"
import { Directory } from "../../../core/hub/Directory.ts"
import { ExpertRoster, matchedClients } from "../../../core/hub/ExpertRoster.ts"
import { loadOrgRoster } from "../../../core/hub/OrgRoster.ts"
import { grantRecordingAccess, RecordingAccess, RecordingGrantAudit } from "../../../core/hub/RecordingGrants.ts"
import type { Registry } from "../../../core/hub/Registry.ts"
import type { IdGenerator } from "../../../core/kernel/Ids.ts"
import type { Transactions } from "../../../core/kernel/Transactions.ts"
import type { IdentityTokens } from "../../../core/hub/IdentityTokens.ts"
import {
  defaultProviderProfiles,
  hasProviderProfile,
  readProvider,
  type ProviderProfiles
} from "../../../core/hub/ServiceDataProviders.ts"
import type { ServiceReads } from "../../../core/hub/ServiceReads.ts"
import { makeShortLink, Shortener, ShortLinkStore } from "../../../core/hub/ShortLinks.ts"
import { errorResponse, hubErrorResponse } from "../ErrorResponse.ts"
import { IdempotencyScope } from "../IdempotencyMiddleware.ts"
import { contextSignatureCheck, type ContextSignaturePlane } from "./ContextSignature.ts"
import {
  CrmSignature,
  CurrentServiceCaller,
  PortalSignature,
  ProviderSignature,
  RecapsSignature,
  ServiceDataApi
} from "./ServiceDataApi.ts"

export interface ServiceDataHttpConfig {
  /** The parsed `HUB_CONTEXT_KEYS`; without any key every signed route answers 501. */
  readonly contextKeys: ContextKeys
  /** Per-caller quota of the signed routes (`HUB_CALLS_PER_MINUTE`), shared by every instance. */
  readonly requestsPerMinute: number
  /** Where people reach the hub (`HUB_PUBLIC_URL`): the origin of every link it composes. */
  readonly publicUrl: string
  /** `HUB_PROVIDER_PROFILES`, parsed: which providers each caller may use (the defaults when unset). */
  readonly providerProfiles?: ProviderProfiles | undefined
}

const noStore = { "cache-control": "no-store" }

/**
 * A signature middleware for one family of routes, admitting the callers `admits` names, each with its own
 * budget of the family: a verified caller runs the route as `CurrentServiceCaller`.
 */
const signedBy = (config: ServiceDataHttpConfig, family: string, admits: (caller: KeyedCaller) => boolean) => {
  const plane: ContextSignaturePlane = {
    contextKeys: config.contextKeys,
    requestsPerMinute: config.requestsPerMinute,
    budget: `hub.service-data.${family}`,
    admits,
    notConfigured: "The service-data plane is not configured."
  }
  return Effect.map(
    contextSignatureCheck(plane),
    (check) =>
      <E, R>(
        httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
        options: { readonly credential: Parameters<typeof check>[0] }
      ) =>
        Effect.flatMap(check(options.credential), (outcome) =>
          typeof outcome === "string"
            ? Effect.provideService(httpEffect, CurrentServiceCaller, outcome)
            : Effect.succeed(outcome)
        )
  )
}

const CrmSignatureLayer = (config: ServiceDataHttpConfig) =>
  Layer.effect(
    CrmSignature,
    Effect.map(
      signedBy(config, "crm", (id) => id === "crm"),
      (contextSignature) => CrmSignature.of({ contextSignature })
    )
  )

const PortalSignatureLayer = (config: ServiceDataHttpConfig) =>
  Layer.effect(
    PortalSignature,
    Effect.map(
      signedBy(config, "onboarding-portal", (id) => id === "onboarding-portal"),
      (signed) =>
        PortalSignature.of({
          contextSignature: (httpEffect, options) =>
            signed(
              Effect.gen(function* () {
                const caller = yield* CurrentServiceCaller
                return yield* Effect.provideService(httpEffect, IdempotencyScope, `service:${caller}`)
              }),
              options
            )
        })
    )
  )

const profilesOf = (config: ServiceDataHttpConfig) => config.providerProfiles ?? defaultProviderProfiles

const ProviderSignatureLayer = (config: ServiceDataHttpConfig) =>
  Layer.effect(
    ProviderSignature,
    Effect.map(
      signedBy(config, "providers", (id) => hasProviderProfile(profilesOf(config), id)),
      (contextSignature) => ProviderSignature.of({ contextSignature })
    )
  )

const RecapsSignatureLayer = (config: ServiceDataHttpConfig) =>
  Layer.effect(
    RecapsSignature,
    Effect.map(
      signedBy(config, "meeting-recaps", (id) => id === "meeting-recaps"),
      (contextSignature) => RecapsSignature.of({ contextSignature })
    )
  )

/**
 * `GET /api/v1/service-data/org-roster`. Fails closed: without the organization directory the route answers
 * 501, never an empty roster. Never cached.
 */
const orgRosterGroup = (config: ServiceDataHttpConfig) =>
  HttpApiBuilder.group(ServiceDataApi, "orgRoster", (handlers) =>
    Effect.gen(function* () {
      const directory = yield* Effect.serviceOption(Directory)
      return handlers.handle("get", ({ query }) =>
        Option.match(directory, {
          onNone: () =>
            Effect.succeed(
              errorResponse("NOT_CONFIGURED", {
                message: "The organization directory is not configured.",
                headers: noStore
              })
            ),
          onSome: (store) =>
            loadOrgRoster(query.orgId).pipe(
              Effect.provideService(Directory, store),
              Effect.map((roster) => HttpServerResponse.jsonUnsafe({ data: roster }, { headers: noStore })),
              Effect.catch(hubErrorResponse),
              Effect.map(HttpServerResponse.setHeaders(noStore))
            )
        })
      )
    })
  ).pipe(Layer.provide(CrmSignatureLayer(config)))

/** `GET .../matched-clients` (over `ExpertRoster`) and `POST .../short-link` (over `Shortener`). */
const recapsDataGroup = (config: ServiceDataHttpConfig) =>
  HttpApiBuilder.group(ServiceDataApi, "recapsData", (handlers) =>
    Effect.gen(function* () {
      const roster = yield* ExpertRoster
      const shortener = yield* Shortener
      return handlers
        .handle("matchedClients", ({ query }) =>
          matchedClients(query.email).pipe(
            Effect.provideService(ExpertRoster, roster),
            Effect.map((clients) => HttpServerResponse.jsonUnsafe({ data: { clients } }, { headers: noStore }))
          )
        )
        .handle("shortLink", ({ payload }) =>
          makeShortLink(config.publicUrl, payload).pipe(
            Effect.provideService(Shortener, shortener),
            Effect.map((link) => ({ data: link }))
          )
        )
    })
  ).pipe(Layer.provide(RecapsSignatureLayer(config)))

/**
 * `POST .../recordings/grant` (over `RecordingAccess` and the registry). A 502 is a failure, not an answer:
 * the unit of work is undone, so nothing is kept for the `Idempotency-Key` and a retry runs again.
 */
const recordingGrantGroup = (config: ServiceDataHttpConfig) =>
  HttpApiBuilder.group(ServiceDataApi, "recordingGrant", (handlers) =>
    Effect.gen(function* () {
      const context = yield* Effect.context<
        Registry | RecordingAccess | RecordingGrantAudit | IdGenerator | Transactions
      >()
      return handlers.handle("grant", ({ payload }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentServiceCaller
          return { data: yield* grantRecordingAccess(caller, { ...payload, action: payload.action ?? "grant" }) }
        }).pipe(
          Effect.provideContext(context),
          Effect.catch((error) =>
            error._tag === "UpstreamError"
              ? Effect.fail({ error: { code: "UPSTREAM_ERROR" as const, message: error.message } })
              : hubErrorResponse(error)
          )
        )
      )
    })
  ).pipe(Layer.provide(PortalSignatureLayer(config)))

/** `GET /api/v1/service-data/{provider}` (over the registry, the directory, identity tokens and `ServiceReads`). */
const providerGroup = (config: ServiceDataHttpConfig) =>
  HttpApiBuilder.group(ServiceDataApi, "serviceDataProvider", (handlers) =>
    Effect.gen(function* () {
      const context = yield* Effect.context<Registry | Directory | IdentityTokens | ServiceReads>()
      return handlers.handle("read", ({ params, query }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentServiceCaller
          return { data: yield* readProvider(caller, profilesOf(config), params.provider, query) }
        }).pipe(Effect.provideContext(context), Effect.catch(hubErrorResponse))
      )
    })
  ).pipe(Layer.provide(ProviderSignatureLayer(config)))

/** `GET /s/{code}`: a redirect to the address the hub's own shortener made the code for. */
const shortLinkRedirectGroup = HttpApiBuilder.group(ServiceDataApi, "shortLinkRedirect", (handlers) =>
  Effect.gen(function* () {
    const store = yield* ShortLinkStore
    return handlers.handle("follow", ({ params }) =>
      Effect.map(store.find(params.code), (url) =>
        url === undefined
          ? errorResponse("NOT_FOUND", { message: "No such link." })
          : HttpServerResponse.redirect(url, { status: 302, headers: { "referrer-policy": "no-referrer" } })
      )
    )
  })
)

/**
 * The hub's service-data plane (docs/hub.md): each route admits its one named caller, signed with its own
 * context key. Needs `RateLimits`, `ExpertRoster`, `Shortener`, `ShortLinkStore`, the registry,
 * `RecordingAccess`, `RecordingGrantAudit`, ids, units of work and the idempotency middlewares; the organization
 * directory when it is there (the roster answers 501 without it). A new layer per call (layers memoize by
 * identity).
 */
export const ServiceDataHandlers = (config: ServiceDataHttpConfig) =>
  Layer.mergeAll(
    orgRosterGroup(config),
    recapsDataGroup(config),
    recordingGrantGroup(config),
    providerGroup(config),
    shortLinkRedirectGroup
  )
