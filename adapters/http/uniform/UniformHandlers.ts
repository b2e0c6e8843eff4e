import { Effect } from "effect"
import { Readiness, type Manifest, type VersionInfo } from "../../../core/kernel/index.ts"
import { FactIntake } from "../../../core/events/FactIntake.ts"
import { answerWith, envelopeAnswers, errorResponse, type CodeDialect } from "../ErrorResponse.ts"

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

/**
 * `POST /api/v1/facts` (the decisions service and the task inbox): the signature headers and the raw body go
 * to the service's FactIntake as they arrived. Refusals are the envelope in the service's dialect; a missing
 * signing key is 503, as every service route whose key is unset.
 */
export const factsHandler = (dialect: CodeDialect) =>
  Effect.map(
    Effect.service(FactIntake),
    (intake) =>
      ({
        headers,
        payload
      }: {
        readonly headers: { readonly "x-platform-signature"?: string; readonly "x-platform-timestamp"?: string }
        readonly payload: Uint8Array
      }) =>
        intake
          .receive({
            signature: headers["x-platform-signature"],
            timestamp: headers["x-platform-timestamp"],
            body: payload
          })
          .pipe(
            Effect.as({ data: { accepted: true as const } }),
            Effect.catch((refusal) =>
              refusal._tag === "NotConfigured"
                ? Effect.succeed(errorResponse("UNAVAILABLE", { message: "The service is not configured yet." }))
                : answerWith(envelopeAnswers, refusal, dialect)
            )
          )
  )
