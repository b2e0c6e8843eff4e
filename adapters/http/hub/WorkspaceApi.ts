import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Data } from "../../../core/kernel/index.ts"
import { ActionResult, PageDocumentLoose, PageEntry } from "../../../core/kernel/PageDocument.ts"
import { ErrorResponses as E } from "../ErrorSchemas.ts"
import { HubPersonAuth } from "./PersonAuth.ts"
import { WorkspaceAppSchema } from "./Schemas.ts"

const ServiceId = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(32))
const Segment = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(512))

const errors = [E.badRequest, E.unauthorized, E.forbidden, E.notFound, E.conflict, E.rateLimited, E.upstream]

/**
 * The workspace of a signed-in person (cookie `hub_session`): the apps their organizations installed, and
 * each app's pages and actions, which the hub fetches from the service with the service's API key and an
 * identity token minted for the person (docs/pages.md).
 */
export class WorkspaceGroup extends HttpApiGroup.make("workspace")
  .add(
    HttpApiEndpoint.get("apps", "/api/v1/workspace/apps", {
      success: Data(Schema.Array(WorkspaceAppSchema)).annotate({ identifier: "WorkspaceAppsEnvelope" }),
      error: [E.unauthorized]
    }).annotate(OpenApi.Description, "The apps the person's organizations installed (live services only)."),
    HttpApiEndpoint.get("pages", "/api/v1/workspace/apps/:serviceId/pages", {
      params: { serviceId: ServiceId },
      success: Data(Schema.Struct({ pages: Schema.Array(PageEntry) })).annotate({ identifier: "WorkspacePages" }),
      error: errors
    }),
    HttpApiEndpoint.get("page", "/api/v1/workspace/apps/:serviceId/pages/:pageId", {
      params: { serviceId: ServiceId, pageId: Segment },
      query: { cursor: Schema.optionalKey(Schema.String), status: Schema.optionalKey(Schema.String) },
      success: Data(Schema.Struct({ page: PageDocumentLoose })).annotate({ identifier: "WorkspacePage" }),
      error: errors
    }).annotate(OpenApi.Description, "One page; the query string is passed to the service as it is."),
    HttpApiEndpoint.post("act", "/api/v1/workspace/apps/:serviceId/actions/:actionId", {
      params: { serviceId: ServiceId, actionId: Segment },
      headers: { "idempotency-key": Schema.optionalKey(Schema.String.check(Schema.isMaxLength(255))) },
      payload: Schema.Record(Schema.String, Schema.Unknown).annotate({ identifier: "ActionValues" }),
      success: Data(ActionResult).annotate({ identifier: "WorkspaceActionResult" }),
      error: [...errors, E.payloadTooLarge]
    }).annotate(
      OpenApi.Description,
      "Run an action of a page with the form's values; `Idempotency-Key` is passed to the service, which applies it."
    ),
    HttpApiEndpoint.get("embed", "/api/v1/workspace/apps/:serviceId/embed", {
      params: { serviceId: ServiceId },
      success: Data(Schema.Struct({ url: Schema.String })).annotate({ identifier: "WorkspaceEmbed" }),
      error: errors
    }).annotate(
      OpenApi.Description,
      "The app's embed URL with a fresh identity token as `wt`; 403 EMBED_NOT_CONSENTED without the organization's consent."
    )
  )
  .middleware(HubPersonAuth)
  .annotateMerge(OpenApi.annotations({ title: "Workspace", description: "The signed-in person's apps" })) {}

/** The workspace group in an API with the hub's id: what its handlers are built against (and tests serve). */
export const WorkspaceApi = HttpApi.make("hub").add(WorkspaceGroup)
