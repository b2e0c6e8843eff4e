import { Cause, Effect, Option, Predicate } from "effect"
import { HttpServerResponse } from "effect/http"
import { SqlError } from "effect/sql"
import { failure, statusOf, type ErrorCode, type Readiness } from "../../core/kernel/index.ts"

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
 * Which spelling of the shared codes a service answers with: the hub's upper-case codes, or the decisions
 * service's `validation_error`.
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
  if (isConnectionFailure(error)) return Effect.as(logCause(error), errorResponse("UNAVAILABLE"))
  return Effect.as(logCause(error), errorResponse("INTERNAL_ERROR"))
}

const logCause = (error: unknown) => Effect.logWarning("request failed", Cause.fail(error))

/**
 * Whether an error is the database refusing or dropping a connection: an `SqlError` whose reason is a
 * connection failure, or an error that carries one as its cause (a few levels down at most).
 */
export const isConnectionFailure = (error: unknown): boolean => {
  let current: unknown = error
  for (let depth = 0; depth < 5 && Predicate.isObject(current); depth++) {
    if (SqlError.isSqlError(current)) return current.reason._tag === "ConnectionError"
    if (SqlError.isSqlErrorReason(current)) return current._tag === "ConnectionError"
    current = Predicate.hasProperty(current, "cause") ? current.cause : undefined
  }
  return false
}

/**
 * Whether an unexpected failure is an outage rather than a bug, decided in this one place for every service.
 * Stores treat infrastructure failures as defects, so they reach the edge without a type. A connection
 * failure anywhere in the cause is an outage. Any other unexpected failure is one too while readiness fails
 * (the database does not answer its ping): an outage shows in many shapes (a dropped connection, a server
 * shutting down, a pool that cannot connect) and the ping asks the database itself. Only a failure while
 * the database answers is a bug, INTERNAL_ERROR. Without a readiness check only connection failures count.
 */
export const isOutage = (
  cause: Cause.Cause<unknown>,
  readiness: Option.Option<Readiness["Service"]>
): Effect.Effect<boolean> => {
  const found = cause.reasons.some(
    (reason) =>
      (Cause.isFailReason(reason) && isConnectionFailure(reason.error)) ||
      (Cause.isDieReason(reason) && isConnectionFailure(reason.defect))
  )
  if (found) return Effect.succeed(true)
  if (Option.isNone(readiness)) return Effect.succeed(false)
  return readiness.value.check.pipe(
    Effect.as(false),
    Effect.orElseSucceed(() => true)
  )
}
