import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Flow, flowDays } from "../../../core/decisions/DecisionFlow.ts"
import { DecisionsWorkspaceHeaders } from "../ContractHeaders.ts"
import { ErrorResponses as E } from "../ErrorSchemas.ts"
import { WorkspaceAuth } from "./Auth.ts"

export const FlowEnvelope = Schema.Struct({ data: Flow }).annotate({ identifier: "DecisionFlowEnvelope" })

const DaysQuery = Schema.NumberFromString.check(
  Schema.isInt(),
  Schema.isBetween({ minimum: flowDays.min, maximum: flowDays.max })
).annotate({ description: `Days in the window, today included (${flowDays.min} to ${flowDays.max}; default 30)` })

/** The flow of the organization's decisions at a glance (org admins). */
export class WorkspaceFlowGroup extends HttpApiGroup.make("workspaceFlow")
  .add(
    HttpApiEndpoint.get("flow", "/api/v1/workspace/flow", {
      headers: DecisionsWorkspaceHeaders,
      query: { days: Schema.optionalKey(DaysQuery) },
      success: FlowEnvelope,
      error: [E.badRequest, E.unauthorized, E.forbidden, E.rateLimited, E.unavailable]
    }).annotate(
      OpenApi.Description,
      "Org admins: decisions created, resolved, expired and escalated per UTC day over the last `days` days, " +
        "the median and 90th percentile of the time to decide per role and per template, and the oldest " +
        "decisions still waiting. Anyone else is 403."
    )
  )
  .middleware(WorkspaceAuth)
  .annotateMerge(
    OpenApi.annotations({
      title: "Workspace plane",
      description: "X-Decisions-Api-Key (the service key) plus X-Workspace-Token (identity token, audience decisions)"
    })
  ) {}
