import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Data, Manifest, VersionInfo } from "../../../core/kernel/index.ts"
import { ErrorResponses } from "../ErrorSchemas.ts"
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

const describe = OpenApi.annotations({ title: "Uniform contract", description: "Health, readiness, manifest, version" })

/**
 * Health, ready, manifest and version under `/api/v1`, mounted by
 * every service. The manifest is behind the service's AUTH-1 key where the service holds one.
 */
export const UniformGroup = HttpApiGroup.make("uniform").add(health, ready, version, manifest).annotateMerge(describe)

export const DecisionsUniformGroup = HttpApiGroup.make("uniform")
  .add(health, ready, version, manifest.middleware(DecisionsServiceKey))
  .annotateMerge(describe)

export const TasksUniformGroup = HttpApiGroup.make("uniform")
  .add(health, ready, version, manifest.middleware(TasksServiceKey))
  .annotateMerge(describe)
