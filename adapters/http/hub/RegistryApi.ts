import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { appSlugPattern } from "../../../core/hub/Registry.ts"
import { Data, Limits } from "../../../core/kernel/index.ts"
import { MaxBodyBytes } from "../BodyLimit.ts"
import { ErrorResponses as E } from "../ErrorSchemas.ts"
import { reportAllIssues } from "../ParseOptions.ts"

const { Hub } = Limits

/**
 * The token is checked with one fixed message: a schema's own message may quote the value it refused, and
 * this value must never travel anywhere, an answer included.
 */
const Token = Schema.String.check(
  Schema.makeFilter(
    (token: string) =>
      (token.length >= Hub.registryTokenMinLength && token.length <= Hub.registryTokenMaxLength) ||
      `must be ${Hub.registryTokenMinLength} to ${Hub.registryTokenMaxLength} characters`
  )
)

/** The platform contract, "RegistryAuthorizationRequest": `token` only; any other property is refused. */
export const RegistryAuthorizationRequest = Schema.Struct({ token: Token }).annotate({
  identifier: "RegistryAuthorizationRequest"
})

const Slugs = (max: number) => Schema.Array(Schema.String).check(Schema.isMaxLength(max))

/** All required, no other property. */
export const RegistryAuthorizationSchema = Schema.Struct({
  active: Schema.Literal(true),
  subject: Schema.Struct({ email: Schema.String, companyId: Schema.String }),
  access: Schema.Struct({
    orgRole: Schema.String,
    deptSlugs: Slugs(Hub.registryDeptSlugsMax),
    roleSlugs: Slugs(Hub.registryRoleSlugsMax),
    permissions: Slugs(Hub.registryPermissionsMax)
  }),
  expiresAt: Schema.String,
  asOf: Schema.String
}).annotate({ identifier: "RegistryAuthorization" })

export const Slug = Schema.String.check(Schema.isPattern(appSlugPattern))

/** A registered app's backend rechecks a user's access. */
export class RegistryAuthorizeGroup extends HttpApiGroup.make("registryAuthorize")
  .add(
    HttpApiEndpoint.post("authorize", "/api/v1/registry/:slug/authorize", {
      params: { slug: Slug },
      // Optional here so that a missing key is the use case's 401, not a 400.
      headers: { "x-workspace-api-key": Schema.optionalKey(Schema.String) },
      payload: RegistryAuthorizationRequest,
      success: Data(RegistryAuthorizationSchema).annotate({ identifier: "RegistryAuthorizationEnvelope" }),
      error: [E.badRequest, E.unauthorized, E.forbidden, E.notFound, E.rateLimited, E.unavailable]
    })
      .annotate(MaxBodyBytes, Hub.registryAuthorizeBodyBytes)
      .annotate(HttpApi.PayloadParseOptions, { ...reportAllIssues, onExcessProperty: "error" })
      .annotate(
        OpenApi.Description,
        "Header X-Workspace-Api-Key (the app's API key) and the app-audience identity token in the body. " +
          "Every answer carries Cache-Control: no-store; deny the app operation on any failure."
      )
  )
  .annotate(HttpApi.ParseOptions, reportAllIssues)
  .annotate(HttpApi.HeadersParseOptions, {})
  .annotateMerge(
    OpenApi.annotations({ title: "Registry authorization", description: "Backend-only callback of registered apps" })
  ) {}

/** A one-group API with the hub's id: what the group's handlers are built against (and tests serve). */
export const RegistryAuthorizeApi = HttpApi.make("hub").add(RegistryAuthorizeGroup)
