import { PlatformSignatureHeaders } from "../ContractHeaders.ts"
import { Context, Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSecurity, OpenApi } from "effect/http-api"
import type { ContextCaller } from "../../../core/hub/ContextKeys.ts"
import { OrgRoles } from "../../../core/hub/Directory.ts"
import { Scopes } from "../../../core/hub/Permissions.ts"
import { Data, Email, Tier } from "../../../core/kernel/index.ts"
import { ErrorResponses as E } from "../ErrorSchemas.ts"
import { reportAllIssues } from "../ParseOptions.ts"

/** The caller of the subject-context plane, once its AUTH-6 signature verified. */
export class CurrentContextCaller extends Context.Service<CurrentContextCaller, ContextCaller>()(
  "adapters/http/hub/CurrentContextCaller"
) {}

/**
 * AUTH-6: `X-Platform-Signature: v1=<hex HMAC-SHA256 of
 * '<X-Platform-Timestamp>.<raw query string>'>` with the caller's own context key; the caller names itself
 * in `X-Workspace-Service-Id`. The signature header is the documented credential; the layer reads the
 * other two headers and the raw query string from the request.
 */
export class ContextSignatureAuth extends HttpApiMiddleware.Service<
  ContextSignatureAuth,
  { provides: CurrentContextCaller }
>()("adapters/http/hub/ContextSignatureAuth", {
  security: { contextSignature: HttpApiSecurity.apiKey({ in: "header", key: "X-Platform-Signature" }) }
}) {}

const OrgRole = Schema.Literals(OrgRoles)

const OrgUnitRef = Schema.Struct({ id: Schema.String, slug: Schema.String, name: Schema.String }).annotate({
  identifier: "OrgUnitRef"
})

const ServiceAccess = Schema.Struct({ access: Schema.Boolean, maxScope: Schema.Literals(Scopes) })

/** The sub-fields of `permissions` are ours (core/hub/Permissions.ts). */
export const SubjectPermissions = Schema.Struct({
  orgRole: Schema.NullOr(OrgRole),
  workspaceAdmin: Schema.Boolean,
  services: Schema.Record(Schema.String, ServiceAccess)
}).annotate({ identifier: "SubjectPermissions" })

export const SubjectContextSchema = Schema.Struct({
  subject: Schema.Struct({
    email: Schema.String,
    companyId: Schema.optionalKey(Schema.String),
    tier: Tier
  }),
  permissions: SubjectPermissions,
  access: Schema.optionalKey(
    Schema.Struct({
      orgRole: OrgRole,
      departments: Schema.Array(Schema.String),
      roles: Schema.Array(Schema.String),
      permissions: Schema.Array(Schema.String)
    })
  ),
  toolBelt: Schema.optionalKey(Schema.Array(Schema.String)),
  team: Schema.optionalKey(
    Schema.Struct({
      organizationId: Schema.String,
      name: Schema.String,
      members: Schema.Array(
        Schema.Struct({
          email: Schema.NullOr(Schema.String),
          name: Schema.NullOr(Schema.String),
          role: OrgRole,
          department: Schema.NullOr(OrgUnitRef),
          departmentRole: Schema.NullOr(OrgUnitRef)
        })
      )
    })
  ),
  preferences: Schema.Struct({ serviceVisible: Schema.Record(Schema.String, Schema.Boolean) }),
  asOf: Schema.String
}).annotate({ identifier: "SubjectContext" })

const describe = OpenApi.annotations({
  title: "Subject context",
  description:
    "AUTH-6: X-Workspace-Service-Id, X-Platform-Timestamp and X-Platform-Signature (v1=<hex HMAC-SHA256 of '<timestamp>.<raw query string>'> with the caller's context key)"
})

/** One user's cross-service context, field-filtered per caller. */
export class SubjectContextGroup extends HttpApiGroup.make("subjectContext")
  .add(
    HttpApiEndpoint.get("get", "/api/v1/subject-context", {
      headers: PlatformSignatureHeaders,
      query: { email: Email },
      success: Data(SubjectContextSchema).annotate({ identifier: "SubjectContextEnvelope" }),
      error: [E.badRequest, E.unauthorized, E.notFound, E.rateLimited, E.internal, E.notConfigured]
    }).annotate(
      OpenApi.Description,
      "The caller names itself in X-Workspace-Service-Id (error-monitoring, schema-analysis, tasks, meeting-recaps). " +
        "Bad or stale signatures and unknown callers get the same 401."
    )
  )
  .middleware(ContextSignatureAuth)
  .annotate(HttpApi.ParseOptions, reportAllIssues)
  .annotate(HttpApi.HeadersParseOptions, {})
  .annotateMerge(describe) {}

/** A one-group API with the hub's id: what the group's handlers are built against (and tests serve). */
export const SubjectContextApi = HttpApi.make("hub").add(SubjectContextGroup)
