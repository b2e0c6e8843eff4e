import { Cause, Effect, Predicate } from "effect"
import { HttpServerResponse } from "effect/http"
import { envelopeRenderer } from "../ErrorEnvelopeMiddleware.ts"
import type { ErrorRenderer } from "../ErrorResponse.ts"
import { answerWith, isConnectionFailure, type ErrorAnswers } from "../ErrorResponse.ts"
import type { InvalidFields, ProposalNotOpen } from "../../../core/tasks/Errors.ts"
import type { Forbidden, NotFound, Unauthorized, UpstreamError } from "../../../core/kernel/index.ts"

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

/** Every domain error the task inbox answers. */
export type TasksDomainError = InvalidFields | Unauthorized | Forbidden | NotFound | ProposalNotOpen | UpstreamError

const given = (message: string | undefined) => (message !== undefined && message.length > 0 ? message : undefined)

/**
 * A use case's failure as the task inbox answers it, one answer per error (a missing one does not compile):
 * InvalidFields 400 with `fields`, Unauthorized 401, Forbidden 403, NotFound 404, ProposalNotOpen 409 (saying
 * what the proposal became), UpstreamError 502 (logged with its cause, answered with a safe message).
 */
export const tasksAnswers: ErrorAnswers<TasksDomainError, void> = {
  InvalidFields: (e) => Effect.succeed(validationFailed(e.fields)),
  Unauthorized: () => Effect.succeed(tasksError(401, messages[401])),
  Forbidden: (e) => Effect.succeed(tasksError(403, given(e.message) ?? messages[403])),
  NotFound: (e) => Effect.succeed(tasksError(404, given(e.message) ?? messages[404])),
  ProposalNotOpen: (e) => Effect.succeed(tasksError(409, `Proposal is no longer open: ${e.aiStatus}`)),
  UpstreamError: (e) =>
    Effect.as(Effect.logWarning("record store failed", Cause.fail(e)), tasksError(502, messages[502]))
}

export const tasksErrorResponse = (error: TasksDomainError) => answerWith(tasksAnswers, error, undefined)

const isTasksDomainError = (error: unknown): error is TasksDomainError =>
  Predicate.hasProperty(error, "_tag") && typeof error._tag === "string" && Object.hasOwn(tasksAnswers, error._tag)

/**
 * A failure whose type is not known: a domain error as its answer says, a database connection failure 502
 * like the store's; anything else is unexpected: logged, answered 500 without detail.
 */
export const tasksFailureResponse = (error: unknown): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  if (isTasksDomainError(error)) return tasksErrorResponse(error)
  if (isConnectionFailure(error)) {
    return Effect.as(
      Effect.logWarning("the database cannot be reached", Cause.fail(error)),
      tasksError(502, messages[502])
    )
  }
  return Effect.as(Effect.logError("unexpected failure", Cause.fail(error)), tasksError(500, messages[500]))
}
