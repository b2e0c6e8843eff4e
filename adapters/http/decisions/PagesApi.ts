import { DecisionsWorkspaceHeaders, IdempotencyKeyOptional } from "../ContractHeaders.ts"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { ActionValuesBody } from "../../../core/decisions/pages/ActionValues.ts"
import { Hub } from "../../../core/kernel/Limits.ts"
import { ActionResult, PageDocument, PageEntry } from "../../../core/kernel/PageDocument.ts"
import { ErrorResponses as E } from "../ErrorSchemas.ts"
import { IdempotencyOptional } from "../IdempotencyMiddleware.ts"
import { WorkspaceAuth } from "./Auth.ts"
import { ListQuery } from "./Schemas.ts"

const data = <S extends Schema.Top>(identifier: string, schema: S) =>
  Schema.Struct({ data: schema }).annotate({ identifier })

const Stat = Schema.Struct({ label: Schema.String, value: Schema.String })
const Status = Schema.Literals(["pending", "needs_info", "resolved", "expired", "cancelled"])

export const PageListEnvelope = data("PageListEnvelope", Schema.Struct({ pages: Schema.Array(PageEntry) }))
export const PageEnvelope = data("PageEnvelope", Schema.Struct({ page: PageDocument }))
export const ActionResultEnvelope = data("ActionResultEnvelope", ActionResult)
export const SummaryEnvelope = data(
  "SummaryEnvelope",
  Schema.Struct({ stats: Schema.Array(Stat), href: Schema.String })
)
export const ActivityEnvelope = data(
  "ActivityEnvelope",
  Schema.Struct({
    items: Schema.Array(
      Schema.Struct({
        id: Schema.String,
        title: Schema.String,
        status: Status,
        updatedAt: Schema.String,
        href: Schema.String
      })
    )
  })
)
export const SearchEnvelope = data(
  "SearchEnvelope",
  Schema.Struct({
    hits: Schema.Array(
      Schema.Struct({
        id: Schema.String,
        title: Schema.String,
        status: Status,
        score: Schema.Number,
        href: Schema.String
      })
    )
  })
)

const PageId = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(128))
const ActionIdParam = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(512))
const SearchQuery = {
  q: Schema.String.check(
    Schema.isMinLength(Hub.serviceDataQueryMinLength),
    Schema.isMaxLength(Hub.serviceDataQueryMaxLength)
  ),
  limit: Schema.optionalKey(
    Schema.NumberFromString.check(
      Schema.isInt(),
      Schema.isBetween({ minimum: Hub.serviceDataLimitMin, maximum: Hub.serviceDataLimitMax })
    )
  )
}

const readErrors = [E.badRequest, E.unauthorized, E.forbidden, E.notFound, E.rateLimited, E.unavailable]

/**
 * The uniform pages plane of the decisions service (docs/pages.md): the hub's workspace lists and opens
 * pages and posts actions for a signed-in person, with the service key and the person's identity token,
 * exactly as on the workspace plane.
 */
export class DecisionsPagesGroup extends HttpApiGroup.make("pages")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/pages", {
      headers: DecisionsWorkspaceHeaders,
      success: PageListEnvelope,
      error: readErrors
    }),
    HttpApiEndpoint.get("get", "/api/v1/pages/:id", {
      params: { id: PageId },
      headers: DecisionsWorkspaceHeaders,
      query: { cursor: ListQuery.cursor, status: ListQuery.status },
      success: PageEnvelope,
      error: readErrors
    }).annotate(
      OpenApi.Description,
      "A page document; list pages take `cursor` and `status` as the workspace list does."
    ),
    HttpApiEndpoint.post("act", "/api/v1/actions/:actionId", {
      params: { actionId: ActionIdParam },
      headers: { ...DecisionsWorkspaceHeaders, ...IdempotencyKeyOptional },
      payload: ActionValuesBody,
      success: ActionResultEnvelope,
      error: [...readErrors, E.conflict, E.payloadTooLarge, E.notConfigured]
    })
      .middleware(IdempotencyOptional)
      .annotate(
        OpenApi.Description,
        "Run an action a page offered, with the form's values (`{}` for a button). Honours `Idempotency-Key`."
      ),
    HttpApiEndpoint.get("summary", "/api/v1/summary", {
      headers: DecisionsWorkspaceHeaders,
      success: SummaryEnvelope,
      error: readErrors
    }),
    HttpApiEndpoint.get("activity", "/api/v1/activity", {
      headers: DecisionsWorkspaceHeaders,
      success: ActivityEnvelope,
      error: readErrors
    }),
    HttpApiEndpoint.get("search", "/api/v1/search", {
      headers: DecisionsWorkspaceHeaders,
      query: SearchQuery,
      success: SearchEnvelope,
      error: readErrors
    })
  )
  .middleware(WorkspaceAuth)
  .annotateMerge(
    OpenApi.annotations({
      title: "Pages plane",
      description: "X-Decisions-Api-Key (the service key) plus X-Workspace-Token (identity token, audience decisions)"
    })
  ) {}
