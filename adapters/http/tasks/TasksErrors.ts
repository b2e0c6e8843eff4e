import { Cause, Effect, Predicate } from "effect"
import { HttpServerResponse } from "effect/http"
import { envelopeRenderer, type ErrorRenderer } from "../ErrorEnvelopeMiddleware.ts"
import { isConnectionFailure } from "../ErrorResponse.ts"

/** The task inbox's errors: `{error: <string>}` with the status; a validation failure also carries `fields`. */
export const tasksError = (status: number, error: string, fields?: Readonly<Record<string, string>>) =>
  HttpServerResponse.jsonUnsafe(fields === undefined ? { error } : { error, fields }, { status })

export const validationFailed = (fields: Readonly<Record<string, string>>) =>
  tasksError(400, "Validation failed", fields)

const uniformPath = /^\/api\/v1(\/|\?|$)/

const messages = {
  400: "Bad request",
  401: "Not authenticated",
  403: "Not permitted",
  404: "Not found",
  409: "Conflict",
  413: "Request body too large",
  500: "Something went wrong on our side",
  502: "The record store is not responding. Retry later.",
  503: "The service is temporarily unavailable. Retry later."
} as const

/** `details` of the router-wide middleware (`[{in, field, message}]`) as the task inbox's `fields` map. */
const fieldsOf = (details: unknown): Record<string, string> => {
  const fields: Record<string, string> = {}
  if (Array.isArray(details)) {
    for (const entry of details) {
      if (Predicate.isObject(entry)) {
        const e = entry as { readonly field?: unknown; readonly message?: unknown; readonly in?: unknown }
        const field = typeof e.field === "string" && e.field.length > 0 ? e.field : String(e.in ?? "body")
        if (!Object.hasOwn(fields, field)) fields[field] = typeof e.message === "string" ? e.message : "Invalid"
      }
    }
  }
  return fields
}

/**
 * The task inbox's dialect of the router-wide error middleware (adapters/http/ErrorEnvelopeMiddleware.ts):
 * unknown routes, unreadable or malformed bodies and schema failures in the `{error}` shape. A database that
 * cannot be reached is the task inbox's store failing: 502, as when its record store fails. Messages are
 * ours, never the toolkit's or an upstream's.
 */
export const tasksRenderer: ErrorRenderer = (request, failure) => {
  // The uniform `/api/v1` group is the platform's contract, documented with the platform's envelope.
  if (request !== undefined && uniformPath.test(request.url)) return envelopeRenderer(request, failure)
  const { code, message, details, status, outage } = failure
  switch (code) {
    case "VALIDATION_ERROR":
      if (status === 415) return tasksError(415, "The request body must be JSON (Content-Type: application/json)")
      if (status !== undefined && status !== 400) return tasksError(status, message ?? messages[400])
      return validationFailed(
        Object.keys(fieldsOf(details)).length === 0 ? { body: "Invalid request" } : fieldsOf(details)
      )
    case "INVALID_JSON":
      return validationFailed({ body: "Must be valid JSON" })
    case "UNAUTHORIZED":
      return tasksError(401, messages[401])
    case "FORBIDDEN":
      return tasksError(403, messages[403])
    case "NOT_FOUND":
      return tasksError(404, messages[404])
    case "PAYLOAD_TOO_LARGE":
      return tasksError(413, messages[413])
    case "UPSTREAM_ERROR":
      return tasksError(502, messages[502])
    case "UNAVAILABLE":
      return outage === true ? tasksError(502, messages[502]) : tasksError(503, messages[503])
    default:
      return tasksError(status ?? 500, messages[500])
  }
}

/**
 * A use case's failure as the task inbox answers it: InvalidFields 400 with `fields`, Unauthorized 401,
 * Forbidden 403, NotFound 404, ProposalNotOpen 409 (saying what the proposal became), UpstreamError 502
 * (logged with its cause, answered with a safe message), and a database connection failure 502 like the
 * store's. Anything else is unexpected: logged, answered 500 without detail.
 */
export const tasksErrorResponse = (error: unknown): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  if (Predicate.hasProperty(error, "_tag")) {
    const e = error as { readonly _tag: string } & Record<string, unknown>
    const message = typeof e.message === "string" && e.message.length > 0 ? e.message : undefined
    switch (e._tag) {
      case "InvalidFields":
        return Effect.succeed(validationFailed(e.fields as Record<string, string>))
      case "Unauthorized":
        return Effect.succeed(tasksError(401, messages[401]))
      case "Forbidden":
        return Effect.succeed(tasksError(403, message ?? messages[403]))
      case "NotFound":
        return Effect.succeed(tasksError(404, message ?? messages[404]))
      case "ProposalNotOpen":
        return Effect.succeed(tasksError(409, `Proposal is no longer open: ${String(e.aiStatus)}`))
      case "UpstreamError":
        return Effect.as(Effect.logWarning("record store failed", Cause.fail(error)), tasksError(502, messages[502]))
    }
  }
  if (isConnectionFailure(error)) {
    return Effect.as(
      Effect.logWarning("the database cannot be reached", Cause.fail(error)),
      tasksError(502, messages[502])
    )
  }
  return Effect.as(Effect.logError("unexpected failure", Cause.fail(error)), tasksError(500, messages[500]))
}
