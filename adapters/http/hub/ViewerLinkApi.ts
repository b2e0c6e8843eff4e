import { PlatformSignatureHeaders } from "../ContractHeaders.ts"
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSecurity, OpenApi } from "effect/http-api"
import { Data, Email } from "../../../core/kernel/index.ts"
import { RootRelativePath } from "../../../core/kernel/RootRelativePath.ts"
import { MaxBodyBytes } from "../BodyLimit.ts"
import { ErrorResponses as E } from "../ErrorSchemas.ts"
import { reportAllIssues } from "../ParseOptions.ts"
import { CurrentContextCaller } from "./ContextApi.ts"

/**
 * A signed service-data change: `X-Platform-Signature: v1=<hex HMAC-SHA256 of '<X-Platform-Timestamp>.<raw
 * body>'>` with the caller's own context key, the caller named in `X-Workspace-Service-Id` (a change signs
 * its body, as a read signs its query string). Bad signatures and callers the route does not admit get the
 * same 401.
 */
export class ServiceDataChangeAuth extends HttpApiMiddleware.Service<
  ServiceDataChangeAuth,
  { provides: CurrentContextCaller }
>()("adapters/http/hub/ServiceDataChangeAuth", {
  security: { contextSignature: HttpApiSecurity.apiKey({ in: "header", key: "X-Platform-Signature" }) }
}) {}

const Address = Email.check(Schema.isMaxLength(254))

export const ViewerLinkRequest = Schema.Struct({
  email: Address,
  invitedByEmail: Address,
  landingPath: RootRelativePath
}).annotate({ identifier: "ViewerLinkRequest" })

export const ViewerLinkSchema = Schema.Struct({
  url: Schema.String.annotate({ format: "uri" } as never),
  created: Schema.Boolean
}).annotate({ identifier: "ViewerLink" })

/** `POST /api/v1/service-data/viewer-link`: an external viewer's sign-in link, for the meeting-recaps service. */
export class ViewerLinkGroup extends HttpApiGroup.make("viewerLink")
  .add(
    HttpApiEndpoint.post("issue", "/api/v1/service-data/viewer-link", {
      headers: PlatformSignatureHeaders,
      payload: ViewerLinkRequest,
      success: Data(ViewerLinkSchema).annotate({ identifier: "ViewerLinkEnvelope" }),
      error: [E.badRequest, E.unauthorized, E.rateLimited, E.notConfigured]
    })
      .annotate(MaxBodyBytes, 8 * 1024)
      .annotate(
        OpenApi.Description,
        "Only meeting-recaps may call (X-Workspace-Service-Id, X-Platform-Timestamp, X-Platform-Signature over " +
          "'<timestamp>.<raw body>'). Finds or makes the viewer's account; every call issues a new single-use " +
          "link and spends the previous one (not idempotent). landingPath must be a path of the hub."
      )
  )
  .middleware(ServiceDataChangeAuth)
  .annotate(HttpApi.ParseOptions, reportAllIssues)
  .annotate(HttpApi.HeadersParseOptions, {})
  .annotateMerge(OpenApi.annotations({ title: "Viewer links", description: "Signed service-data plane" })) {}
