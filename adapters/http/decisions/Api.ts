import { DecisionsWorkspaceHeaders, IdempotencyKeyOptional, IdempotencyKeyRequired } from "../ContractHeaders.ts"
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { DecisionCreate } from "../../../core/decisions/Decision.ts"
import { RoleCreate, RoleUpdate, AssignmentCreate } from "../../../core/decisions/Role.ts"
import { TemplateCreate, TemplateRaise } from "../../../core/decisions/Template.ts"
import { TemplateUpdate } from "../../../core/decisions/Templates.ts"
import { ErrorResponses as E } from "../ErrorSchemas.ts"
import { IdempotencyOptional, IdempotencyRequired } from "../IdempotencyMiddleware.ts"
import { reportAllIssues } from "../ParseOptions.ts"
import { DecisionsUniformGroup } from "../uniform/UniformApi.ts"
import { CallerAuth, WorkspaceAuth } from "./Auth.ts"
import { WorkspaceFlowGroup } from "./FlowApi.ts"
import { DecisionsPagesGroup } from "./PagesApi.ts"
import {
  AssignmentListEnvelope,
  ChooseBody,
  DecisionEnvelope,
  DecisionId,
  DecisionListEnvelope,
  DeclineBody,
  InfoRequestBody,
  InfoResponseBody,
  KeyCreate,
  KeyCreatedEnvelope,
  KeyEnvelope,
  KeyListEnvelope,
  ListQuery,
  RecordStoreCredentialsBody,
  RecordStoreStatusEnvelope,
  RoleEnvelope,
  RoleListEnvelope,
  RouteBody,
  TemplateEnvelope,
  TemplateListEnvelope,
  WaitQuery,
  WebhookCreate,
  WebhookCreatedEnvelope,
  WebhookDeliveryListEnvelope,
  WebhookEnvelope,
  WebhookListEnvelope,
  WorkspaceScope
} from "./Schemas.ts"

const idParam = { id: DecisionId }
// Every data route may also answer 503 UNAVAILABLE while the database cannot be reached.
const mutationErrors = [
  E.badRequest,
  E.unauthorized,
  E.notFound,
  E.conflict,
  E.payloadTooLarge,
  E.rateLimited,
  E.unavailable
]
const readErrors = [E.badRequest, E.unauthorized, E.notFound, E.rateLimited, E.unavailable]
const created = <S extends Schema.Top>(schema: S) => schema.pipe(HttpApiSchema.status(201))

/** Agents and services post decisions and learn the outcome. */
export class CallerGroup extends HttpApiGroup.make("caller")
  .add(
    HttpApiEndpoint.post("create", "/api/v1/decisions", {
      headers: IdempotencyKeyRequired,
      payload: DecisionCreate,
      success: created(DecisionEnvelope),
      error: mutationErrors
    })
      .middleware(IdempotencyRequired)
      .annotate(OpenApi.Description, "Create a decision. `Idempotency-Key` is required."),
    HttpApiEndpoint.get("get", "/api/v1/decisions/:id", {
      params: idParam,
      query: WaitQuery,
      success: DecisionEnvelope,
      error: readErrors
    }).annotate(
      OpenApi.Description,
      "Read a decision. With `wait` (seconds, at most 60) the request blocks until the status changes or the wait ends."
    ),
    HttpApiEndpoint.get("list", "/api/v1/decisions", {
      query: ListQuery,
      success: DecisionListEnvelope,
      error: readErrors
    }),
    HttpApiEndpoint.post("infoResponse", "/api/v1/decisions/:id/info-response", {
      params: idParam,
      headers: IdempotencyKeyOptional,
      payload: InfoResponseBody,
      success: DecisionEnvelope,
      error: mutationErrors
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.post("cancel", "/api/v1/decisions/:id/cancel", {
      params: idParam,
      headers: IdempotencyKeyOptional,
      success: DecisionEnvelope,
      error: mutationErrors
    }).middleware(IdempotencyOptional)
  )
  .middleware(CallerAuth)
  .annotateMerge(OpenApi.annotations({ title: "Caller plane", description: "Authorization: Bearer dcd_<key>" })) {}

const workspace = OpenApi.annotations({
  title: "Workspace plane",
  description: "X-Decisions-Api-Key (the service key) plus X-Workspace-Token (identity token, audience decisions)"
})

/** People work their inbox. */
export class WorkspaceDecisionsGroup extends HttpApiGroup.make("workspaceDecisions")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/workspace/decisions", {
      headers: DecisionsWorkspaceHeaders,
      query: { ...ListQuery, scope: Schema.optionalKey(WorkspaceScope) },
      success: DecisionListEnvelope,
      error: readErrors
    }),
    HttpApiEndpoint.get("get", "/api/v1/workspace/decisions/:id", {
      params: idParam,
      headers: DecisionsWorkspaceHeaders,
      success: DecisionEnvelope,
      error: readErrors
    }),
    HttpApiEndpoint.post("choose", "/api/v1/workspace/decisions/:id/choose", {
      params: idParam,
      headers: { ...DecisionsWorkspaceHeaders, ...IdempotencyKeyOptional },
      payload: ChooseBody,
      success: DecisionEnvelope,
      error: [...mutationErrors, E.forbidden]
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.post("decline", "/api/v1/workspace/decisions/:id/decline", {
      params: idParam,
      headers: { ...DecisionsWorkspaceHeaders, ...IdempotencyKeyOptional },
      payload: DeclineBody,
      success: DecisionEnvelope,
      error: [...mutationErrors, E.forbidden]
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.post("askInfo", "/api/v1/workspace/decisions/:id/info-requests", {
      params: idParam,
      headers: { ...DecisionsWorkspaceHeaders, ...IdempotencyKeyOptional },
      payload: InfoRequestBody,
      success: DecisionEnvelope,
      error: [...mutationErrors, E.forbidden]
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.post("route", "/api/v1/workspace/decisions/:id/route", {
      params: idParam,
      headers: { ...DecisionsWorkspaceHeaders, ...IdempotencyKeyOptional },
      payload: RouteBody,
      success: DecisionEnvelope,
      error: [...mutationErrors, E.forbidden]
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.post("retryAction", "/api/v1/workspace/decisions/:id/actions/:actionId/retry", {
      params: { ...idParam, actionId: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(64)) },
      headers: { ...DecisionsWorkspaceHeaders, ...IdempotencyKeyOptional },
      success: DecisionEnvelope,
      error: [...mutationErrors, E.forbidden]
    })
      .middleware(IdempotencyOptional)
      .annotate(
        OpenApi.Description,
        "Re-queue a dead-lettered record action (deciders of the decision and org admins); any other status is 409 invalid_transition."
      )
  )
  .middleware(WorkspaceAuth)
  .annotateMerge(workspace) {}

const slugParam = { slug: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(50)) }
const adminErrors = [...mutationErrors, E.forbidden]

/** Decision roles and their holders (org admins change them; every member may read). */
export class WorkspaceRolesGroup extends HttpApiGroup.make("workspaceRoles")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/workspace/roles", {
      headers: DecisionsWorkspaceHeaders,
      success: RoleListEnvelope,
      error: readErrors
    }),
    HttpApiEndpoint.post("create", "/api/v1/workspace/roles", {
      headers: { ...DecisionsWorkspaceHeaders, ...IdempotencyKeyOptional },
      payload: RoleCreate,
      success: created(RoleEnvelope),
      error: adminErrors
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.patch("update", "/api/v1/workspace/roles/:slug", {
      params: slugParam,
      headers: { ...DecisionsWorkspaceHeaders, ...IdempotencyKeyOptional },
      payload: RoleUpdate,
      success: RoleEnvelope,
      error: adminErrors
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.post("archive", "/api/v1/workspace/roles/:slug/archive", {
      params: slugParam,
      headers: { ...DecisionsWorkspaceHeaders, ...IdempotencyKeyOptional },
      success: RoleEnvelope,
      error: adminErrors
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.get("assignments", "/api/v1/workspace/roles/:slug/assignments", {
      params: slugParam,
      headers: DecisionsWorkspaceHeaders,
      success: AssignmentListEnvelope,
      error: readErrors
    }),
    HttpApiEndpoint.post("assign", "/api/v1/workspace/roles/:slug/assignments", {
      params: slugParam,
      headers: { ...DecisionsWorkspaceHeaders, ...IdempotencyKeyOptional },
      payload: AssignmentCreate,
      success: created(AssignmentListEnvelope),
      error: adminErrors
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.delete("unassign", "/api/v1/workspace/roles/:slug/assignments/:email", {
      params: { ...slugParam, email: Schema.String.check(Schema.isMinLength(3), Schema.isMaxLength(254)) },
      headers: { ...DecisionsWorkspaceHeaders, ...IdempotencyKeyOptional },
      success: AssignmentListEnvelope,
      error: adminErrors
    }).middleware(IdempotencyOptional)
  )
  .middleware(WorkspaceAuth)
  .annotateMerge(workspace) {}

const keyParam = { id: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(64)) }

/** Caller keys (org admins). The plaintext appears only in the create and rotate answers. */
export class WorkspaceKeysGroup extends HttpApiGroup.make("workspaceKeys")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/workspace/keys", {
      headers: DecisionsWorkspaceHeaders,
      success: KeyListEnvelope,
      error: [...readErrors, E.forbidden]
    }),
    HttpApiEndpoint.post("create", "/api/v1/workspace/keys", {
      headers: { ...DecisionsWorkspaceHeaders, ...IdempotencyKeyOptional },
      payload: KeyCreate,
      success: created(KeyCreatedEnvelope),
      error: adminErrors
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.post("rotate", "/api/v1/workspace/keys/:id/rotate", {
      params: keyParam,
      headers: { ...DecisionsWorkspaceHeaders, ...IdempotencyKeyOptional },
      success: KeyCreatedEnvelope,
      error: adminErrors
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.post("revoke", "/api/v1/workspace/keys/:id/revoke", {
      params: keyParam,
      headers: { ...DecisionsWorkspaceHeaders, ...IdempotencyKeyOptional },
      success: KeyEnvelope,
      error: adminErrors
    }).middleware(IdempotencyOptional)
  )
  .middleware(WorkspaceAuth)
  .annotateMerge(workspace) {}

const templateParam = { slug: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(50)) }

/** Templates (org admins keep them; members read and raise them). */
export class WorkspaceTemplatesGroup extends HttpApiGroup.make("workspaceTemplates")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/workspace/templates", {
      headers: DecisionsWorkspaceHeaders,
      success: TemplateListEnvelope,
      error: readErrors
    }),
    HttpApiEndpoint.post("create", "/api/v1/workspace/templates", {
      headers: { ...DecisionsWorkspaceHeaders, ...IdempotencyKeyOptional },
      payload: TemplateCreate,
      success: created(TemplateEnvelope),
      error: adminErrors
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.get("get", "/api/v1/workspace/templates/:slug", {
      params: templateParam,
      headers: DecisionsWorkspaceHeaders,
      success: TemplateEnvelope,
      error: readErrors
    }),
    HttpApiEndpoint.patch("update", "/api/v1/workspace/templates/:slug", {
      params: templateParam,
      headers: { ...DecisionsWorkspaceHeaders, ...IdempotencyKeyOptional },
      payload: TemplateUpdate,
      success: TemplateEnvelope,
      error: adminErrors
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.post("archive", "/api/v1/workspace/templates/:slug/archive", {
      params: templateParam,
      headers: { ...DecisionsWorkspaceHeaders, ...IdempotencyKeyOptional },
      success: TemplateEnvelope,
      error: adminErrors
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.post("raise", "/api/v1/workspace/templates/:slug/raise", {
      params: templateParam,
      headers: { ...DecisionsWorkspaceHeaders, ...IdempotencyKeyOptional },
      payload: TemplateRaise,
      success: created(DecisionEnvelope),
      error: mutationErrors
    }).middleware(IdempotencyOptional)
  )
  .middleware(WorkspaceAuth)
  .annotateMerge(workspace) {}

/** Raising a template with a caller key: `Idempotency-Key` is required, as for create. */
export class CallerTemplatesGroup extends HttpApiGroup.make("callerTemplates")
  .add(
    HttpApiEndpoint.post("raise", "/api/v1/templates/:slug/raise", {
      params: templateParam,
      headers: IdempotencyKeyRequired,
      payload: TemplateRaise,
      success: created(DecisionEnvelope),
      error: mutationErrors
    }).middleware(IdempotencyRequired)
  )
  .middleware(CallerAuth)
  .annotateMerge(OpenApi.annotations({ title: "Caller plane" })) {}

/** Signed webhooks: callers register endpoints; the secret is in the create answer only. */
export class CallerWebhooksGroup extends HttpApiGroup.make("callerWebhooks")
  .add(
    HttpApiEndpoint.post("register", "/api/v1/webhooks", {
      headers: IdempotencyKeyOptional,
      payload: WebhookCreate,
      success: created(WebhookCreatedEnvelope),
      error: mutationErrors
    }).middleware(IdempotencyOptional)
  )
  .middleware(CallerAuth)
  .annotateMerge(OpenApi.annotations({ title: "Caller plane" })) {}

export class WorkspaceWebhooksGroup extends HttpApiGroup.make("workspaceWebhooks")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/workspace/webhooks", {
      headers: DecisionsWorkspaceHeaders,
      success: WebhookListEnvelope,
      error: [...readErrors, E.forbidden]
    }),
    HttpApiEndpoint.post("disable", "/api/v1/workspace/webhooks/:id/disable", {
      params: keyParam,
      headers: { ...DecisionsWorkspaceHeaders, ...IdempotencyKeyOptional },
      success: WebhookEnvelope,
      error: adminErrors
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.get("deliveries", "/api/v1/workspace/webhooks/:id/deliveries", {
      params: keyParam,
      headers: DecisionsWorkspaceHeaders,
      query: { limit: ListQuery.limit },
      success: WebhookDeliveryListEnvelope,
      error: [...readErrors, E.forbidden]
    }).annotate(OpenApi.Description, "An endpoint's recent deliveries, newest first: status, attempts, last error.")
  )
  .middleware(WorkspaceAuth)
  .annotateMerge(workspace) {}

/** The organization's record-store credentials for template record actions (org admins; never shown again). */
export class WorkspaceIntegrationsGroup extends HttpApiGroup.make("workspaceIntegrations")
  .add(
    HttpApiEndpoint.get("recordStore", "/api/v1/workspace/integrations/record-store", {
      headers: DecisionsWorkspaceHeaders,
      success: RecordStoreStatusEnvelope,
      error: [...readErrors, E.forbidden]
    }),
    HttpApiEndpoint.put("setRecordStore", "/api/v1/workspace/integrations/record-store", {
      headers: { ...DecisionsWorkspaceHeaders, ...IdempotencyKeyOptional },
      payload: RecordStoreCredentialsBody,
      success: RecordStoreStatusEnvelope,
      error: [...adminErrors, E.notConfigured]
    })
      .middleware(IdempotencyOptional)
      .annotate(
        OpenApi.Description,
        "Set the token record actions use. It is kept encrypted and never returned; actions waiting for setup are queued."
      )
  )
  .middleware(WorkspaceAuth)
  .annotateMerge(workspace) {}

/** The decisions service's contract. */
export class DecisionsApi extends HttpApi.make("decisions")
  .add(DecisionsUniformGroup)
  .add(CallerGroup)
  .add(WorkspaceDecisionsGroup)
  .add(WorkspaceRolesGroup)
  .add(WorkspaceKeysGroup)
  .add(WorkspaceTemplatesGroup)
  .add(CallerTemplatesGroup)
  .add(CallerWebhooksGroup)
  .add(WorkspaceWebhooksGroup)
  .add(WorkspaceIntegrationsGroup)
  .add(WorkspaceFlowGroup)
  .add(DecisionsPagesGroup)
  .annotate(HttpApi.ParseOptions, reportAllIssues)
  .annotate(HttpApi.HeadersParseOptions, {})
  .annotateMerge(OpenApi.annotations({ title: "Decisions service", description: "Human-in-the-loop decisions" })) {}
