import { Effect } from "effect"
import { Readiness, type Manifest, type VersionInfo } from "../../../core/kernel/index.ts"
import { errorResponse } from "../ErrorResponse.ts"

export interface UniformConfig {
  readonly manifest: Manifest
  readonly version: VersionInfo
}

/** The handlers of the uniform group, the same for every service; `ready` asks the service's Readiness. */
export const uniformHandlers = (config: UniformConfig) =>
  Effect.map(Readiness, (readiness) => ({
    health: () => Effect.succeed({ data: { status: "ok" as const } }),
    ready: () =>
      readiness.check.pipe(
        Effect.as({ data: { status: "ready" as const } }),
        Effect.catch(() => Effect.succeed(errorResponse("UNAVAILABLE", { message: "The service is not ready." })))
      ),
    version: () => Effect.succeed({ data: config.version }),
    manifest: () => Effect.succeed({ data: config.manifest })
  }))
