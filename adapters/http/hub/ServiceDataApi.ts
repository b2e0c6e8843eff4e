import { Context, Schema } from "effect"
import {
  HttpApi,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSchema,
  HttpApiSecurity,
  OpenApi
} from "effect/http-api"
import type { KeyedCaller } from "../../../core/hub/ContextKeys.ts"
import { OrgStatuses } from "../../../core/hub/Directory.ts"
import { RecordingActions, RecordingId } from "../../../core/hub/RecordingGrants.ts"
import { RosterRoles } from "../../../core/hub/OrgRoster.ts"
import { ShortLinkKinds, shortLinkSlugPattern } from "../../../core/hub/ShortLinks.ts"
import { Data, Email } from "../../../core/kernel/index.ts"
import { MaxBodyBytes } from "../BodyLimit.ts"
import { IdempotencyKeyOptional, PlatformSignatureHeaders } from "../ContractHeaders.ts"
import { IdempotencyOptional, IdempotencyScope } from "../IdempotencyMiddleware.ts"
import { ErrorResponses as E } from "../ErrorSchemas.ts"
import { reportAllIssues } from "../ParseOptions.ts"

/** The caller of a service-data route, once its AUTH-6 signature verified and the route admitted it. */
export class CurrentServiceCaller extends Context.Service<CurrentServiceCaller, KeyedCaller>()(
  "adapters/http/hub/CurrentServiceCaller"
) {}

const security = { contextSignature: HttpApiSecurity.apiKey({ in: "header", key: "X-Platform-Signature" }) }

/** AUTH-6 over the raw query string, admitting only `crm`. */
export class CrmSignature extends HttpApiMiddleware.Service<CrmSignature, { provides: CurrentServiceCaller }>()(
  "adapters/http/hub/CrmSignature",
  { security }
) {}

/**
 * AUTH-6 over the raw body, admitting only `onboarding-portal`; it also names the scope of the caller's
 * `Idempotency-Key`s.
 */
export class PortalSignature extends HttpApiMiddleware.Service<
  PortalSignature,
  { provides: CurrentServiceCaller | IdempotencyScope }
>()("adapters/http/hub/PortalSignature", { security }) {}

/** AUTH-6 over the raw query string, admitting the callers given a provider profile. */
export class ProviderSignature extends HttpApiMiddleware.Service<
  ProviderSignature,
  { provides: CurrentServiceCaller }
>()("adapters/http/hub/ProviderSignature", { security }) {}

/** AUTH-6 admitting only `meeting-recaps`: a read signs its raw query string, a change its raw body. */
export class RecapsSignature extends HttpApiMiddleware.Service<RecapsSignature, { provides: CurrentServiceCaller }>()(
  "adapters/http/hub/RecapsSignature",
  { security }
) {}

const Address = Email.check(Schema.isMaxLength(254))

const signedRead =
  "Signed (X-Workspace-Service-Id, X-Platform-Timestamp, X-Platform-Signature: v1=<hex HMAC-SHA256 of " +
  "'<timestamp>.<raw query string>'> with the caller's context key). "
const signedChange =
  "Signed (X-Workspace-Service-Id, X-Platform-Timestamp, X-Platform-Signature: v1=<hex HMAC-SHA256 of " +
  "'<timestamp>.<raw body>'> with the caller's context key). "

export const OrgRosterSchema = Schema.Struct({
  org: Schema.Struct({
    id: Schema.String,
    status: Schema.Literals(OrgStatuses),
    name: Schema.NullOr(Schema.String),
    archivedAt: Schema.NullOr(Schema.String),
    mergedIntoOrgId: Schema.NullOr(Schema.String)
  }),
  members: Schema.Array(
    Schema.Struct({ email: Schema.String, name: Schema.NullOr(Schema.String), role: Schema.Literals(RosterRoles) })
  )
}).annotate({ identifier: "OrgRoster" })

/** `GET /api/v1/service-data/org-roster`, for the `crm` service. */
export class OrgRosterGroup extends HttpApiGroup.make("orgRoster")
  .add(
    HttpApiEndpoint.get("get", "/api/v1/service-data/org-roster", {
      headers: PlatformSignatureHeaders,
      query: { orgId: Schema.String.check(Schema.isBetweenLength(1, 64)) },
      success: Data(OrgRosterSchema).annotate({ identifier: "OrgRosterEnvelope" }),
      error: [E.badRequest, E.unauthorized, E.notFound, E.rateLimited, E.internal, E.notConfigured]
    }).annotate(
      OpenApi.Description,
      signedRead +
        "Only crm may call. The organization's status (merged beats archived beats active; deleted beats " +
        "all) and its members with a verified email; no members for a deleted organization. Never cached " +
        "(Cache-Control: no-store). 404 for an id no organization ever had; 501 without a context key or " +
        "an organization directory."
    )
  )
  .middleware(CrmSignature)
  .annotate(HttpApi.ParseOptions, reportAllIssues)
  .annotate(HttpApi.HeadersParseOptions, {})
  .annotateMerge(OpenApi.annotations({ title: "Organization rosters", description: "Signed service-data plane" })) {}

export const MatchedClientsSchema = Schema.Struct({ clients: Schema.Array(Schema.String) }).annotate({
  identifier: "MatchedClients"
})

export const ShortLinkRequest = Schema.Struct({
  kind: Schema.Literals(ShortLinkKinds),
  slug: Schema.String.check(Schema.isPattern(shortLinkSlugPattern))
}).annotate({ identifier: "ShortLinkRequest" })

export const ShortLinkSchema = Schema.Struct({
  url: Schema.String.annotate({ format: "uri" } as never),
  shortened: Schema.Boolean
}).annotate({ identifier: "ShortLink" })

/** The meeting-recaps service's routes: the engineers' matched clients and branded short links. */
export class RecapsDataGroup extends HttpApiGroup.make("recapsData")
  .add(
    HttpApiEndpoint.get("matchedClients", "/api/v1/service-data/matched-clients", {
      headers: PlatformSignatureHeaders,
      query: { email: Address },
      success: Data(MatchedClientsSchema).annotate({ identifier: "MatchedClientsEnvelope" }),
      error: [E.badRequest, E.unauthorized, E.rateLimited, E.internal, E.notConfigured]
    }).annotate(
      OpenApi.Description,
      signedRead +
        "Only meeting-recaps may call. The expert-session clients whose active engineers include `email`, " +
        "from the expert roster (read at most once a minute per instance). Empty for anyone who is not an " +
        "engineer, and whenever the roster is unconfigured, unreachable or answers something else."
    ),
    HttpApiEndpoint.post("shortLink", "/api/v1/service-data/short-link", {
      headers: PlatformSignatureHeaders,
      payload: ShortLinkRequest,
      success: Data(ShortLinkSchema).annotate({ identifier: "ShortLinkEnvelope" }),
      error: [E.badRequest, E.unauthorized, E.rateLimited, E.notConfigured]
    })
      .annotate(MaxBodyBytes, 4 * 1024)
      .annotate(
        OpenApi.Description,
        signedChange +
          "Only meeting-recaps may call. The hub composes the address itself (its public URL and a fixed path " +
          "per kind: recording -> /recordings/{slug}) and shortens it; the same address always gets the same " +
          "short link. When shortening is off or fails the answer is still 200, with the long address and " +
          "shortened false."
      )
  )
  .middleware(RecapsSignature)
  .annotate(HttpApi.ParseOptions, reportAllIssues)
  .annotate(HttpApi.HeadersParseOptions, {})
  .annotateMerge(OpenApi.annotations({ title: "Meeting recaps data", description: "Signed service-data plane" })) {}

export const RecordingGrantRequest = Schema.Struct({
  recordingId: RecordingId,
  email: Address.annotate({ description: "The prospect whose playback access changes" }),
  grantedByEmail: Address.annotate({ description: "Who asked for the change (kept in the hub's audit)" }),
  action: Schema.optionalKey(Schema.Literals(RecordingActions).annotate({ description: "Default grant" }))
}).annotate({ identifier: "RecordingGrantRequest" })

export const RecordingGrantSchema = Schema.Struct({
  recordingId: Schema.String,
  email: Schema.String,
  action: Schema.Literals(RecordingActions)
}).annotate({ identifier: "RecordingGrant" })

/**
 * The recordings service refused or could not be reached: 502, and nothing is kept for the request's
 * `Idempotency-Key`, so the caller's retry with the same key runs again.
 */
export const RecordingsUpstreamError = Schema.Struct({
  error: Schema.Struct({ code: Schema.Literal("UPSTREAM_ERROR"), message: Schema.String })
})
  .annotate({ identifier: "RecordingsUpstreamError", description: "The recordings service refused or is unreachable" })
  .pipe(HttpApiSchema.status(502))

/** `POST /api/v1/service-data/recordings/grant`, for the onboarding portal. */
export class RecordingGrantGroup extends HttpApiGroup.make("recordingGrant")
  .add(
    HttpApiEndpoint.post("grant", "/api/v1/service-data/recordings/grant", {
      headers: { ...PlatformSignatureHeaders, ...IdempotencyKeyOptional },
      payload: RecordingGrantRequest,
      success: Data(RecordingGrantSchema).annotate({ identifier: "RecordingGrantEnvelope" }),
      error: [RecordingsUpstreamError, E.badRequest, E.unauthorized, E.conflict, E.rateLimited, E.notConfigured]
    })
      .middleware(IdempotencyOptional)
      .annotate(MaxBodyBytes, 4 * 1024)
      .annotate(
        OpenApi.Description,
        signedChange +
          "Only onboarding-portal may call. Grants (the default) or revokes a prospect's playback access to a " +
          "recording at the registered meeting-recaps service, and keeps the hub's audit entry. Idempotent " +
          "for every action: 200 when applied or already so. 502 when the recordings service refuses or " +
          "cannot be reached (retry; nothing is kept for the Idempotency-Key)."
      )
  )
  .middleware(PortalSignature)
  .annotate(HttpApi.ParseOptions, reportAllIssues)
  .annotate(HttpApi.HeadersParseOptions, {})
  .annotateMerge(OpenApi.annotations({ title: "Recording grants", description: "Signed service-data plane" })) {}

const SearchResultSchema = Schema.Struct({
  kind: Schema.Literals(["service", "hit"]),
  service: Schema.String,
  title: Schema.String,
  score: Schema.NullOr(Schema.Number),
  href: Schema.NullOr(Schema.String)
}).annotate({ identifier: "ServiceDataSearchResult" })

export const ProviderAnswerSchema = Schema.Union([
  Schema.Struct({
    provider: Schema.Literal("search"),
    degraded: Schema.Boolean,
    results: Schema.Array(SearchResultSchema)
  }).annotate({ identifier: "ServiceDataSearch" }),
  Schema.Struct({
    provider: Schema.Literals(["schema-analysis", "error-monitoring"]),
    degraded: Schema.Boolean,
    summary: Schema.Unknown.annotate({ description: "The product's own summary data; null when degraded" })
  }).annotate({ identifier: "ServiceDataSummary" })
]).annotate({ identifier: "ServiceDataProviderAnswer" })

/** `GET /api/v1/service-data/{provider}`: the cross-service data plane, per caller's provider profile. */
export class ProviderGroup extends HttpApiGroup.make("serviceDataProvider")
  .add(
    HttpApiEndpoint.get("read", "/api/v1/service-data/:provider", {
      params: { provider: Schema.String.check(Schema.isMaxLength(64)) },
      headers: PlatformSignatureHeaders,
      query: {
        email: Schema.optionalKey(Address),
        q: Schema.optionalKey(Schema.String.check(Schema.isBetweenLength(2, 200))),
        limit: Schema.optionalKey(
          Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 25 }))
        )
      },
      success: Data(ProviderAnswerSchema).annotate({ identifier: "ServiceDataProviderEnvelope" }),
      error: [E.badRequest, E.unauthorized, E.forbidden, E.notFound, E.rateLimited, E.notConfigured]
    }).annotate(
      OpenApi.Description,
      signedRead +
        "provider is search, schema-analysis or error-monitoring; the callers with a provider profile may call, " +
        "each only the providers of its profile (403 otherwise). search needs q (2 to 200 characters) and " +
        "answers the catalog's live services and, with email, the hits of the products the subject may use; " +
        "schema-analysis and error-monitoring need email and the subject's entitlement (installed, tier; 403) " +
        "and answer the product's summary. A product that does not answer gives degraded: true, never a 5xx."
    )
  )
  .middleware(ProviderSignature)
  .annotate(HttpApi.ParseOptions, reportAllIssues)
  .annotate(HttpApi.HeadersParseOptions, {})
  .annotateMerge(OpenApi.annotations({ title: "Service data providers", description: "Signed service-data plane" })) {}

/** `GET /s/{code}`: the hub's own short links, a redirect to the address each code was made for. */
export class ShortLinkRedirectGroup extends HttpApiGroup.make("shortLinkRedirect")
  .add(
    HttpApiEndpoint.get("follow", "/s/:code", {
      params: { code: Schema.String.check(Schema.isMaxLength(64)) },
      success: HttpApiSchema.Empty(302),
      error: [E.notFound]
    }).annotate(OpenApi.Description, "302 to the address the code was made for; 404 for an unknown code.")
  )
  .annotateMerge(OpenApi.annotations({ title: "Short links", description: "The hub's own link shortener" })) {}

/** The service-data groups in an API of their own with the hub's id: what the handlers are built against. */
export const ServiceDataApi = HttpApi.make("hub")
  .add(OrgRosterGroup)
  .add(RecapsDataGroup)
  .add(RecordingGrantGroup)
  .add(ProviderGroup)
  .add(ShortLinkRedirectGroup)
