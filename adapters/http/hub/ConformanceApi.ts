import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Data } from "../../../core/kernel/index.ts"
import { ErrorResponses } from "../ErrorSchemas.ts"
import { HubAdminAuth } from "./AdminAuth.ts"

const ConformanceCheck = Schema.Struct({
  name: Schema.String,
  passed: Schema.Boolean,
  detail: Schema.optional(Schema.String)
})

export const ConformanceReport = Schema.Struct({
  ranAt: Schema.String,
  passed: Schema.Boolean,
  checks: Schema.Array(ConformanceCheck)
}).annotate({ identifier: "ConformanceReport" })

// A service id is at most 32 characters (core/hub/Registry.ts); anything longer is simply not found.
const params = { id: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(64)) }
const errors = [ErrorResponses.unauthorized, ErrorResponses.notFound, ErrorResponses.notConfigured]

/**
 * Operator plane: run a registered service's conformance check against its base URL and
 * read the latest report. Promotion to live (elsewhere) requires a passing report.
 */
export const ConformanceGroup = HttpApiGroup.make("conformance")
  .add(
    HttpApiEndpoint.post("run", "/api/v1/admin/services/:id/conformance", {
      params,
      success: Data(ConformanceReport),
      error: errors
    }).annotate(OpenApi.Description, "Probes the service's uniform contract now; answers and keeps the report."),
    HttpApiEndpoint.get("latest", "/api/v1/admin/services/:id/conformance", {
      params,
      success: Data(ConformanceReport),
      error: errors
    }).annotate(OpenApi.Description, "The latest report; 404 when the service is unknown or was never checked.")
  )
  .middleware(HubAdminAuth)
  .annotateMerge(OpenApi.annotations({ title: "Conformance", description: "Operator: Bearer HUB_ADMIN_KEY" }))
