import { Cause, Effect, Predicate } from "effect"
import { HttpServerResponse } from "effect/http"
import { failure, statusOf, type ErrorCode } from "../../core/kernel/index.ts"

/** The failure envelope as a response; the status comes from the taxonomy unless a route says otherwise. */
export const errorResponse = (
  code: ErrorCode,
  options: {
    readonly message?: string | undefined
    readonly details?: unknown
    readonly status?: number | undefined
    readonly headers?: Record<string, string> | undefined
  } = {}
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.jsonUnsafe(failure(code, options.message, options.details), {
    status: options.status ?? statusOf(code),
    headers: options.headers
  })

/**
 * Which spelling of the shared codes a service answers with: the hub uses document 1's upper-case codes,
 * the decisions service document 2's `validation_error`.
 */
export type CodeDialect = "hub" | "decisions"

export const validationCode = (dialect: CodeDialect): ErrorCode =>
  dialect === "decisions" ? "validation_error" : "VALIDATION_ERROR"

/**
 * Turns the platform's domain errors (core/kernel/Errors.ts) into envelope responses. Anything else is
 * unexpected: logged with its cause, answered as INTERNAL_ERROR with no detail.
 */
export const domainErrorResponse = (
  error: unknown,
  dialect: CodeDialect = "hub"
): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  if (Predicate.hasProperty(error, "_tag")) {
    const e = error as { readonly _tag: string } & Record<string, unknown>
    const message = typeof e.message === "string" && e.message.length > 0 ? e.message : undefined
    switch (e._tag) {
      case "ValidationError":
        return Effect.succeed(errorResponse(validationCode(dialect), { message, details: e.details }))
      case "Unauthorized":
        return Effect.succeed(errorResponse("UNAUTHORIZED"))
      case "Forbidden":
        return Effect.succeed(errorResponse("FORBIDDEN", { message }))
      case "NotFound":
        return Effect.succeed(errorResponse("NOT_FOUND", { message }))
      case "Conflict":
        return Effect.succeed(errorResponse("CONFLICT", { message }))
      case "PayloadTooLarge":
        return Effect.succeed(
          errorResponse(dialect === "decisions" ? "payload_too_large" : "PAYLOAD_TOO_LARGE", {
            details: { limitBytes: e.limitBytes }
          })
        )
      case "RateLimited":
        return Effect.succeed(
          errorResponse("RATE_LIMITED", { headers: { "retry-after": String(e.retryAfterSeconds) } })
        )
      case "NotConfigured":
        return Effect.succeed(errorResponse("NOT_CONFIGURED", { message }))
      case "UpstreamError":
        return Effect.as(logCause(error), errorResponse("UPSTREAM_ERROR"))
      case "Unavailable":
        return Effect.as(logCause(error), errorResponse("UNAVAILABLE"))
      case "UnknownRole":
        return Effect.succeed(errorResponse("unknown_role", { details: { validRoles: e.validRoles } }))
      case "UnknownTemplate":
        return Effect.succeed(errorResponse("unknown_template", { details: { validTemplates: e.validTemplates } }))
      case "InvalidTransition":
        return Effect.succeed(
          errorResponse("invalid_transition", {
            message: `That is not allowed while the decision is ${String(e.status).replace("_", " ")}.`,
            details: { status: e.status }
          })
        )
      case "InvalidActionTransition":
        return Effect.succeed(
          errorResponse("invalid_transition", {
            message: `That is not allowed while the action is ${String(e.status).replace(/_/g, " ")}.`,
            details: { actionStatus: e.status }
          })
        )
      case "IdempotencyConflict":
        return Effect.succeed(errorResponse("idempotency_conflict"))
      case "IdempotencyInProgress":
        return Effect.succeed(errorResponse("idempotency_in_progress"))
    }
  }
  return Effect.as(logCause(error), errorResponse("INTERNAL_ERROR"))
}

const logCause = (error: unknown) => Effect.logWarning("request failed", Cause.fail(error))
