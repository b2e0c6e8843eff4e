import { IdempotencyKeyOptional } from "../ContractHeaders.ts"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { FlagNames, OrgRoles, OrgStatuses } from "../../../core/hub/Directory.ts"
import { CredentialKinds, ServiceStatuses } from "../../../core/hub/ServiceStore.ts"
import { Email } from "../../../core/kernel/Email.ts"
import { Hub } from "../../../core/kernel/Limits.ts"
import { Tier } from "../../../core/kernel/Manifest.ts"
import { ErrorResponses as E } from "../ErrorSchemas.ts"
import { HubAdminAuth } from "./AdminAuth.ts"
import { IdempotencyOptional } from "../IdempotencyMiddleware.ts"

// Shapes only; the rules (trimming, slugs, namespaces, https) are core/hub/Identity.ts and Registry.ts, whose
// messages name the field.
const text = (max: number) => Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(max))
const Timestamp = Schema.String.annotate({ format: "date-time" })
const envelope = <S extends Schema.Top>(identifier: string, data: S) => Schema.Struct({ data }).annotate({ identifier })

const OrgUnitRef = Schema.Struct({ id: text(64), slug: text(64), name: text(120) }).annotate({
  identifier: "OrgUnitRef"
})
const Consents = Schema.Struct({
  companyId: Schema.Boolean,
  accessClaims: Schema.Boolean,
  embed: Schema.Boolean
}).annotate({ identifier: "Consents" })

export const Organization = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  tier: Tier,
  status: Schema.Literals(OrgStatuses),
  createdAt: Timestamp,
  archivedAt: Schema.NullOr(Timestamp),
  mergedIntoOrgId: Schema.NullOr(Schema.String),
  deletedAt: Schema.NullOr(Timestamp)
}).annotate({ identifier: "Organization" })

export const User = Schema.Struct({
  id: Schema.String,
  email: Schema.String,
  name: Schema.NullOr(Schema.String),
  verified: Schema.Boolean,
  createdAt: Timestamp
}).annotate({ identifier: "User" })

export const Member = Schema.Struct({
  userId: Schema.String,
  email: Schema.String,
  name: Schema.NullOr(Schema.String),
  verified: Schema.Boolean,
  role: Schema.Literals(OrgRoles),
  department: Schema.NullOr(OrgUnitRef),
  departmentRole: Schema.NullOr(OrgUnitRef),
  departments: Schema.Array(Schema.String),
  roles: Schema.Array(Schema.String),
  createdAt: Timestamp
}).annotate({ identifier: "Member" })

export const Installation = Schema.Struct({
  serviceId: Schema.String,
  active: Schema.Boolean,
  epoch: Schema.Int.annotate({
    description: "Unix seconds of the last uninstall or re-consent; tokens issued at or before it are refused"
  }),
  consents: Consents,
  permissions: Schema.Array(Schema.String),
  updatedAt: Timestamp
}).annotate({ identifier: "Installation" })

const ConformanceReport = Schema.Struct({
  ranAt: Timestamp,
  passed: Schema.Boolean,
  checks: Schema.Array(
    Schema.Struct({ name: Schema.String, passed: Schema.Boolean, detail: Schema.optional(Schema.String) })
  )
}).annotate({ identifier: "ConformanceReport" })

/** A registered service as operators see it: never any credential. */
export const Service = Schema.Struct({
  id: Schema.String,
  displayName: Schema.String,
  baseUrl: Schema.String,
  status: Schema.Literals(ServiceStatuses),
  apiKeyHeader: Schema.String,
  resourcePath: Schema.String,
  firstParty: Schema.Boolean,
  pages: Schema.optionalKey(Schema.Boolean),
  embedUrl: Schema.optionalKey(Schema.String),
  appUrl: Schema.optionalKey(Schema.String),
  consumesFacts: Schema.optionalKey(Schema.Array(Schema.String)).annotate({
    description: "The facts its manifest declares, as its latest conformance check read them: the hub sends them"
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  conformance: Schema.NullOr(ConformanceReport)
}).annotate({ identifier: "RegisteredService" })

const Credentials = Schema.Struct({
  apiKey: Schema.String,
  signingKey: Schema.String,
  embedKey: Schema.String
}).annotate({ identifier: "ServiceCredentials", description: "Shown once; the hub never returns them again" })

const Flag = Schema.Struct({
  name: Schema.Literals(FlagNames),
  orgId: Schema.NullOr(Schema.String),
  enabled: Schema.Boolean
}).annotate({ identifier: "FlagSetting" })

export const OrgCreateBody = Schema.Struct({ name: text(200), tier: Schema.optionalKey(Tier) }).annotate({
  identifier: "OrgCreate"
})

export const OrgPatchBody = Schema.Struct({
  tier: Schema.optionalKey(Tier),
  archived: Schema.optionalKey(Schema.Boolean),
  mergedIntoOrgId: Schema.optionalKey(Schema.NullOr(text(Hub.orgIdMax))).annotate({
    description: "The surviving organization; null undoes a merge"
  }),
  deleted: Schema.optionalKey(Schema.Literal(true)).annotate({ description: "Deletes the organization for good" })
}).annotate({ identifier: "OrgUpdate" })

export const UserCreateBody = Schema.Struct({
  email: Email,
  name: text(200),
  verified: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "UserCreate" })

export const MemberAddBody = Schema.Struct({ email: Email, role: Schema.Literals(OrgRoles) }).annotate({
  identifier: "MemberAdd"
})

export const MemberPatchBody = Schema.Struct({
  role: Schema.optionalKey(Schema.Literals(OrgRoles)),
  department: Schema.optionalKey(Schema.NullOr(OrgUnitRef)),
  departmentRole: Schema.optionalKey(Schema.NullOr(OrgUnitRef)),
  departments: Schema.optionalKey(Schema.Array(text(64)).check(Schema.isMaxLength(Hub.registryDeptSlugsMax))),
  roles: Schema.optionalKey(Schema.Array(text(64)).check(Schema.isMaxLength(Hub.registryRoleSlugsMax)))
}).annotate({ identifier: "MemberUpdate" })

export const InstallationBody = Schema.Struct({
  consents: Consents,
  permissions: Schema.optionalKey(Schema.Array(text(128)).check(Schema.isMaxLength(Hub.registryPermissionsMax)))
}).annotate({ identifier: "InstallationGrant" })

export const FlagBody = Schema.Struct({
  enabled: Schema.Boolean,
  orgId: Schema.optionalKey(text(Hub.orgIdMax))
}).annotate({ identifier: "FlagSet" })

export const ServiceRegisterBody = Schema.Struct({
  id: text(32),
  displayName: text(200),
  baseUrl: text(2048),
  apiKeyHeader: Schema.optionalKey(text(64)),
  resourcePath: Schema.optionalKey(text(512)),
  pages: Schema.optionalKey(Schema.Boolean).annotate({ description: "The service serves pages for the workspace" }),
  embedUrl: Schema.optionalKey(text(2048)).annotate({
    description: "The page the workspace embeds full page (https); the hub adds the identity token as `wt`"
  }),
  appUrl: Schema.optionalKey(text(2048)).annotate({
    description: "The service's own web app (https), which the workspace links to; people sign in there through the hub"
  })
}).annotate({ identifier: "ServiceRegistration" })

export const TokenBody = Schema.Struct({
  service: text(32),
  email: Email,
  companyId: Schema.optionalKey(text(Hub.orgIdMax))
}).annotate({ identifier: "IdentityTokenRequest" })

const OrgView = envelope(
  "OrgEnvelope",
  Schema.Struct({ org: Organization, members: Schema.Array(Member), installations: Schema.Array(Installation) })
)
const MemberEnvelope = envelope("MemberEnvelope", Schema.Struct({ member: Member }))
const ServiceEnvelope = envelope("ServiceEnvelope", Schema.Struct({ service: Service }))

const orgParam = { orgId: text(Hub.orgIdMax) }
const memberParams = { ...orgParam, email: text(Hub.emailMax) }
const installationParams = { ...orgParam, serviceId: text(32) }
const serviceParam = { id: text(32) }

const created = <S extends Schema.Top>(schema: S) => schema.pipe(HttpApiSchema.status(201))
const readErrors = [E.badRequest, E.unauthorized, E.notFound, E.notConfigured, E.unavailable]
const writeErrors = [...readErrors, E.conflict, E.payloadTooLarge]

/**
 * The hub's operator plane: identity and entitlements, the service registry and development tokens,
 * every route under `/api/v1/admin` behind `Authorization: Bearer <HUB_ADMIN_KEY>`.
 */
export class AdminGroup extends HttpApiGroup.make("admin")
  .add(
    HttpApiEndpoint.post("createOrg", "/api/v1/admin/orgs", {
      headers: IdempotencyKeyOptional,
      payload: OrgCreateBody,
      success: created(OrgView),
      error: writeErrors
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.get("listOrgs", "/api/v1/admin/orgs", {
      success: envelope("OrgListEnvelope", Schema.Struct({ orgs: Schema.Array(Organization) })),
      error: readErrors
    }).annotate(
      OpenApi.Description,
      "Every organization, by id, whatever its status (active, archived, merged, deleted)."
    ),
    HttpApiEndpoint.get("getOrg", "/api/v1/admin/orgs/:orgId", {
      params: orgParam,
      success: OrgView,
      error: readErrors
    }).annotate(OpenApi.Description, "An organization with its status, roster and installations."),
    HttpApiEndpoint.patch("updateOrg", "/api/v1/admin/orgs/:orgId", {
      params: orgParam,
      headers: IdempotencyKeyOptional,
      payload: OrgPatchBody,
      success: OrgView,
      error: writeErrors
    })
      .middleware(IdempotencyOptional)
      .annotate(
        OpenApi.Description,
        "Set the tier, archive or unarchive, merge (or undo a merge with null), delete. Status: merged > archived > active; deleted beats all."
      ),
    HttpApiEndpoint.post("createUser", "/api/v1/admin/users", {
      headers: IdempotencyKeyOptional,
      payload: UserCreateBody,
      success: created(envelope("UserEnvelope", Schema.Struct({ user: User }))),
      error: writeErrors
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.get("listUsers", "/api/v1/admin/users", {
      success: envelope("UserListEnvelope", Schema.Struct({ users: Schema.Array(User) })),
      error: readErrors
    }).annotate(OpenApi.Description, "Every user of the hub's directory, by email."),
    HttpApiEndpoint.post("addMember", "/api/v1/admin/orgs/:orgId/members", {
      params: orgParam,
      headers: IdempotencyKeyOptional,
      payload: MemberAddBody,
      success: created(MemberEnvelope),
      error: writeErrors
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.patch("updateMember", "/api/v1/admin/orgs/:orgId/members/:email", {
      params: memberParams,
      headers: IdempotencyKeyOptional,
      payload: MemberPatchBody,
      success: MemberEnvelope,
      error: writeErrors
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.delete("removeMember", "/api/v1/admin/orgs/:orgId/members/:email", {
      params: memberParams,
      headers: IdempotencyKeyOptional,
      success: envelope("MemberRemovedEnvelope", Schema.Struct({ removed: Schema.Literal(true) })),
      error: writeErrors
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.put("install", "/api/v1/admin/orgs/:orgId/installations/:serviceId", {
      params: installationParams,
      headers: IdempotencyKeyOptional,
      payload: InstallationBody,
      success: envelope("InstallationEnvelope", Schema.Struct({ installation: Installation })),
      error: writeErrors
    })
      .middleware(IdempotencyOptional)
      .annotate(
        OpenApi.Description,
        "Install a registered app, or re-consent an installed one (the epoch moves to now: earlier tokens stop working)."
      ),
    HttpApiEndpoint.delete("uninstall", "/api/v1/admin/orgs/:orgId/installations/:serviceId", {
      params: installationParams,
      headers: IdempotencyKeyOptional,
      success: envelope("InstallationEnvelope", Schema.Struct({ installation: Installation })),
      error: writeErrors
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.put("setFlag", "/api/v1/admin/flags/:name", {
      params: { name: Schema.Literals(FlagNames) },
      headers: IdempotencyKeyOptional,
      payload: FlagBody,
      success: envelope("FlagEnvelope", Schema.Struct({ flag: Flag })),
      error: writeErrors
    })
      .middleware(IdempotencyOptional)
      .annotate(OpenApi.Description, "Set a flag globally, or for one organization with `orgId`."),
    HttpApiEndpoint.post("registerService", "/api/v1/admin/services", {
      headers: IdempotencyKeyOptional,
      payload: ServiceRegisterBody,
      success: created(
        envelope("ServiceRegisteredEnvelope", Schema.Struct({ service: Service, credentials: Credentials }))
      ),
      error: writeErrors
    })
      .middleware(IdempotencyOptional)
      .annotate(OpenApi.Description, "Register a service in draft. The three credentials are in this answer only."),
    HttpApiEndpoint.get("listServices", "/api/v1/admin/services", {
      success: envelope("ServiceListEnvelope", Schema.Struct({ services: Schema.Array(Service) })),
      error: readErrors
    }),
    HttpApiEndpoint.get("getService", "/api/v1/admin/services/:id", {
      params: serviceParam,
      success: ServiceEnvelope,
      error: readErrors
    }),
    HttpApiEndpoint.post("rotateCredential", "/api/v1/admin/services/:id/credentials/:kind/rotate", {
      params: { ...serviceParam, kind: Schema.Literals(CredentialKinds) },
      headers: IdempotencyKeyOptional,
      success: envelope(
        "CredentialRotatedEnvelope",
        Schema.Struct({ service: Service, kind: Schema.Literals(CredentialKinds), value: Schema.String })
      ),
      error: writeErrors
    })
      .middleware(IdempotencyOptional)
      .annotate(OpenApi.Description, "A new value, shown once; the old one stops working at once."),
    HttpApiEndpoint.post("promoteService", "/api/v1/admin/services/:id/promote", {
      params: serviceParam,
      headers: IdempotencyKeyOptional,
      success: ServiceEnvelope,
      error: [...writeErrors, E.forbidden]
    })
      .middleware(IdempotencyOptional)
      .annotate(OpenApi.Description, "Draft or suspended to live; 403 without a passing conformance report."),
    HttpApiEndpoint.post("suspendService", "/api/v1/admin/services/:id/suspend", {
      params: serviceParam,
      headers: IdempotencyKeyOptional,
      success: ServiceEnvelope,
      error: writeErrors
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.post("mintToken", "/api/v1/admin/tokens", {
      payload: TokenBody,
      success: envelope("IdentityTokenEnvelope", Schema.Struct({ token: Schema.String, expiresAt: Timestamp })),
      error: [...writeErrors, E.forbidden]
    }).annotate(
      OpenApi.Description,
      "Mint an AUTH-4 identity token for development: audience the service, 300 s; `companyId` must be one of the user's organizations."
    )
  )
  .middleware(HubAdminAuth)
  .annotateMerge(
    OpenApi.annotations({ title: "Operator plane", description: "Authorization: Bearer <HUB_ADMIN_KEY>" })
  ) {}
