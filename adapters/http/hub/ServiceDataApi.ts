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
import { RosterRoles } from "../../../core/hub/OrgRoster.ts"
import { ShortLinkKinds, shortLinkSlugPattern } from "../../../core/hub/ShortLinks.ts"
import { Data, Email } from "../../../core/kernel/index.ts"
import { MaxBodyBytes } from "../BodyLimit.ts"
import { PlatformSignatureHeaders } from "../ContractHeaders.ts"
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
export const ServiceDataApi = HttpApi.make("hub").add(OrgRosterGroup).add(RecapsDataGroup).add(ShortLinkRedirectGroup)
