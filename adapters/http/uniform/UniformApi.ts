import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Hub } from "../../../core/kernel/Limits.ts"
import { Data, Manifest, VersionInfo } from "../../../core/kernel/index.ts"
import { MaxBodyBytes } from "../BodyLimit.ts"
import { ErrorResponses } from "../ErrorSchemas.ts"
import { reportAllIssues } from "../ParseOptions.ts"
import { DecisionsServiceKey, TasksServiceKey } from "./ServiceKeyAuth.ts"

export const HealthStatus = Data(Schema.Struct({ status: Schema.Literal("ok") })).annotate({
  identifier: "HealthStatus"
})
export const ReadyStatus = Data(Schema.Struct({ status: Schema.Literal("ready") })).annotate({
  identifier: "ReadyStatus"
})

const health = HttpApiEndpoint.get("health", "/api/v1/health", { success: HealthStatus })
const ready = HttpApiEndpoint.get("ready", "/api/v1/ready", { success: ReadyStatus, error: ErrorResponses.unavailable })
const version = HttpApiEndpoint.get("version", "/api/v1/version", { success: Data(VersionInfo) })
const manifest = HttpApiEndpoint.get("manifest", "/api/v1/manifest", {
  success: Data(Manifest),
  error: [ErrorResponses.unauthorized, ErrorResponses.unavailable]
})

export const FactAccepted = Data(Schema.Struct({ accepted: Schema.Literal(true) })).annotate({
  identifier: "FactAccepted"
})

const optionalHeader = Schema.optionalKey(Schema.String)

/**
 * `POST /api/v1/facts`: a fact from the hub, signed with AUTH-2 (the service's own signing key) over the raw
 * body, which is why the body is taken as bytes and decoded only once the signature holds.
 */
export const facts = HttpApiEndpoint.post("facts", "/api/v1/facts", {
  // Optional in the schema so that a missing signature is the same 401 as a bad one, not a 400.
  headers: { "x-platform-signature": optionalHeader, "x-platform-timestamp": optionalHeader },
  payload: Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({ contentType: "application/json" })).annotate({
    description:
      "A Fact as JSON, `{fact, subject: {email, companyId?}, data}`, signed with AUTH-2; at most 64 KB. " +
      "Facts taken: organization.status.changed, data `{organizationId, status, changedAt}`."
  }),
  success: FactAccepted.pipe(HttpApiSchema.status(202)),
  error: [
    ErrorResponses.badRequest,
    ErrorResponses.unauthorized,
    ErrorResponses.payloadTooLarge,
    ErrorResponses.unavailable
  ]
})
  .annotate(MaxBodyBytes, Hub.eventBodyBytes)
  .annotate(HttpApi.ParseOptions, reportAllIssues)
  .annotate(HttpApi.HeadersParseOptions, {})
  .annotate(
    OpenApi.Description,
    "A fact from the hub. 202 accepted (a repeat changes nothing); 400 not JSON, invalid, or a fact this " +
      "service does not consume; 401 bad or stale signature; 413 over 64 KB; 503 no signing key configured."
  )

const describe = OpenApi.annotations({ title: "Uniform contract", description: "Health, readiness, manifest, version" })

/**
 * Health, ready, manifest and version under `/api/v1`, mounted by
 * every service. The manifest is behind the service's AUTH-1 key where the service holds one. The decisions
 * service and the task inbox also take the hub's facts (`facts`).
 */
export const UniformGroup = HttpApiGroup.make("uniform").add(health, ready, version, manifest).annotateMerge(describe)

export const DecisionsUniformGroup = HttpApiGroup.make("uniform")
  .add(health, ready, version, manifest.middleware(DecisionsServiceKey), facts)
  .annotateMerge(describe)

export const TasksUniformGroup = HttpApiGroup.make("uniform")
  .add(health, ready, version, manifest.middleware(TasksServiceKey), facts)
  .annotateMerge(describe)
