import { Cause, Effect, Option, Predicate, Schema } from "effect"
import { type HttpServerRequest, HttpServerResponse } from "effect/http"
import { SqlError } from "effect/sql"
import type {
  InvalidActionTransition,
  InvalidTransition,
  UnknownRole,
  UnknownTemplate
} from "../../core/decisions/Errors.ts"
import type { InvalidJson, UnknownEventType } from "../../core/hub/EventIngest.ts"
import type { EmbedNotConsented, ServiceRefused } from "../../core/hub/Workspace.ts"
import type { IdempotencyConflict } from "../../core/idempotency/Idempotency.ts"
import {
  failure,
  isErrorCode,
  safeMessage,
  statusOf,
  FieldIssues,
  type Conflict,
  type ErrorCode,
  type Forbidden,
  type NotConfigured,
  type NotFound,
  type PayloadTooLarge,
  type RateLimited,
  type Readiness,
  type Unauthorized,
  type Unavailable,
  type UpstreamError,
  type ValidationError
} from "../../core/kernel/index.ts"

/** The validation code in the hub's and the decisions service's spellings. */
export type ValidationCode = "VALIDATION_ERROR" | "validation_error"

interface FailureAnswer {
  readonly message?: string
  readonly status?: number
  /** UNAVAILABLE because the database cannot be reached (a dialect may answer that in its own way). */
  readonly outage?: boolean
}

/** A failure to answer: its code, and for a validation code the list of bad fields. */
export type RenderedFailure =
  | (FailureAnswer & { readonly code: ValidationCode; readonly details?: FieldIssues | undefined })
  | (FailureAnswer & { readonly code: Exclude<ErrorCode, ValidationCode>; readonly details?: unknown })

/** How a service renders an error body: the envelope, or the task inbox's `{error}`. */
export type ErrorRenderer = (
  /** The request answered: its method and target, or nothing when Node refused it before it was read. */
  request: Pick<HttpServerRequest.HttpServerRequest, "url" | "method"> | undefined,
  failure: RenderedFailure
) => HttpServerResponse.HttpServerResponse

const isValidationCode = (code: ErrorCode): code is ValidationCode =>
  code === "VALIDATION_ERROR" || code === "validation_error"

/** What an error answer says besides its code; a validation answer's details are its bad fields. */
export interface ErrorOptions<C extends ErrorCode = ErrorCode> {
  readonly message?: string | undefined
  readonly details?: (C extends ValidationCode ? FieldIssues : unknown) | undefined
  readonly status?: number | undefined
  readonly headers?: Record<string, string> | undefined
}

/**
 * The failure envelope as a response; the status comes from the taxonomy unless a route says otherwise.
 * Every validation answer carries `details`, the list of bad fields (`[{in, field, message}]`, FieldIssue in
 * core/kernel): one that names no field says so of the whole body (`{in: "body", field: ""}`).
 */
export const errorResponse = <C extends ErrorCode>(
  code: C,
  options: ErrorOptions<C> = {}
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.jsonUnsafe(
    failure(
      code,
      options.message,
      isValidationCode(code)
        ? (options.details ?? [{ in: "body", field: "", message: safeMessage(code, options.message) }])
        : options.details
    ),
    { status: options.status ?? statusOf(code), headers: options.headers }
  )

/**
 * Which spelling of the shared codes a service answers with: the hub's upper-case codes, or the decisions
 * service's `validation_error`.
 */
export type CodeDialect = "hub" | "decisions"

export const validationCode = (dialect: CodeDialect): ValidationCode =>
  dialect === "decisions" ? "validation_error" : "VALIDATION_ERROR"

/** Every domain error the envelope dialects answer, by service. */
export type KernelError =
  | ValidationError
  | Unauthorized
  | Forbidden
  | NotFound
  | Conflict
  | PayloadTooLarge
  | RateLimited
  | NotConfigured
  | UpstreamError
  | Unavailable
  | IdempotencyConflict

export type HubDomainError = KernelError | InvalidJson | UnknownEventType | ServiceRefused | EmbedNotConsented
export type DecisionsDomainError =
  KernelError | UnknownRole | UnknownTemplate | InvalidTransition | InvalidActionTransition

/** Every error an envelope dialect answers. */
export type EnvelopeError = HubDomainError | DecisionsDomainError

/**
 * One answer per error tag: a mapping that leaves a tag out does not compile, so a new domain error is mapped
 * on purpose rather than answered 500.
 */
export type ErrorAnswers<E extends { readonly _tag: string }, Context> = {
  readonly [Tag in E["_tag"]]: (
    error: Extract<E, { readonly _tag: Tag }>,
    context: Context
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse>
}

/** Applies the answer for the error's tag. */
export const answerWith = <E extends { readonly _tag: string }, Context>(
  answers: ErrorAnswers<E, Context>,
  error: E,
  context: Context
): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
  (
    answers[error._tag as E["_tag"]] as (
      error: E,
      context: Context
    ) => Effect.Effect<HttpServerResponse.HttpServerResponse>
  )(error, context)

const given = (message: string | undefined) => (message !== undefined && message.length > 0 ? message : undefined)

/** The envelope answer of each domain error, in the hub's and the decisions service's spellings. */
export const envelopeAnswers: ErrorAnswers<EnvelopeError, CodeDialect> = {
  ValidationError: (e, dialect) =>
    Effect.succeed(
      errorResponse(validationCode(dialect), {
        message: given(e.message),
        details: e.details
      })
    ),
  Unauthorized: () => Effect.succeed(errorResponse("UNAUTHORIZED")),
  Forbidden: (e) => Effect.succeed(errorResponse("FORBIDDEN", { message: given(e.message) })),
  NotFound: (e) => Effect.succeed(errorResponse("NOT_FOUND", { message: given(e.message) })),
  Conflict: (e) => Effect.succeed(errorResponse("CONFLICT", { message: given(e.message) })),
  PayloadTooLarge: (e, dialect) =>
    Effect.succeed(
      errorResponse(dialect === "decisions" ? "payload_too_large" : "PAYLOAD_TOO_LARGE", {
        details: { limitBytes: e.limitBytes }
      })
    ),
  RateLimited: (e) =>
    Effect.succeed(errorResponse("RATE_LIMITED", { headers: { "retry-after": String(e.retryAfterSeconds) } })),
  NotConfigured: (e) => Effect.succeed(errorResponse("NOT_CONFIGURED", { message: given(e.message) })),
  UpstreamError: (e) => Effect.as(logCause(e), errorResponse("UPSTREAM_ERROR")),
  Unavailable: (e) => Effect.as(logCause(e), errorResponse("UNAVAILABLE")),
  IdempotencyConflict: () => Effect.succeed(errorResponse("idempotency_conflict")),
  UnknownRole: (e) => Effect.succeed(errorResponse("unknown_role", { details: { validRoles: e.validRoles } })),
  UnknownTemplate: (e) =>
    Effect.succeed(errorResponse("unknown_template", { details: { validTemplates: e.validTemplates } })),
  InvalidTransition: (e) =>
    Effect.succeed(
      errorResponse("invalid_transition", {
        message: `That is not allowed while the decision is ${e.status.replace("_", " ")}.`,
        details: { status: e.status }
      })
    ),
  InvalidActionTransition: (e) =>
    Effect.succeed(
      errorResponse("invalid_transition", {
        message: `That is not allowed while the action is ${e.status.replace(/_/g, " ")}.`,
        details: { actionStatus: e.status }
      })
    ),
  InvalidJson: () => Effect.succeed(errorResponse("INVALID_JSON")),
  UnknownEventType: () =>
    Effect.succeed(
      errorResponse("UNKNOWN_EVENT_TYPE", {
        details: [{ in: "body", field: "type", message: "is not in the event catalog" }]
      })
    ),
  EmbedNotConsented: () => Effect.succeed(errorResponse("EMBED_NOT_CONSENTED")),
  ServiceRefused: (e) => Effect.succeed(refused(e))
}

const byStatus: Record<number, ErrorCode> = {
  400: "VALIDATION_ERROR",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  409: "CONFLICT",
  413: "PAYLOAD_TOO_LARGE",
  422: "VALIDATION_ERROR",
  429: "RATE_LIMITED"
}

const relayedIssues = Schema.decodeUnknownOption(FieldIssues)

/**
 * A service's refusal relayed by the hub's workspace with its status: its code when the taxonomy knows it,
 * its message and details as the service gave them. A relayed validation refusal keeps its details only when
 * they are the list of bad fields every validation answer carries; other details are dropped rather than
 * answered in a shape the hub does not promise.
 */
const refused = (error: ServiceRefused) => {
  const code: ErrorCode = isErrorCode(error.code) ? error.code : (byStatus[error.status] ?? "VALIDATION_ERROR")
  const details = isValidationCode(code) ? Option.getOrUndefined(relayedIssues(error.details)) : error.details
  return errorResponse(code, {
    status: error.status,
    message: error.message,
    details,
    ...(error.status === 429 ? { headers: { "retry-after": "60" } } : {})
  })
}

/** A hub use case's failure as the hub's envelope (`VALIDATION_ERROR`, `NOT_FOUND`, ...). */
export const hubErrorResponse = (error: HubDomainError) => answerWith(envelopeAnswers, error, "hub")

/** A decisions use case's failure as the decisions envelope (`validation_error`, `invalid_transition`, ...). */
export const decisionsErrorResponse = (error: DecisionsDomainError) => answerWith(envelopeAnswers, error, "decisions")

/** A hub handler's work with its domain failures answered in the hub's envelope. */
export const answerHub = <A, E extends HubDomainError, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catch(effect, hubErrorResponse)

/** A decisions handler's work with its domain failures answered in the decisions envelope. */
export const answerDecisions = <A, E extends DecisionsDomainError, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catch(effect, decisionsErrorResponse)

const isEnvelopeError = (error: unknown): error is EnvelopeError =>
  Predicate.hasProperty(error, "_tag") && typeof error._tag === "string" && Object.hasOwn(envelopeAnswers, error._tag)

/**
 * A failure whose type is not known (a tool's error, a defect): a domain error is answered as its mapping says;
 * a database connection failure is UNAVAILABLE; anything else is logged and answered INTERNAL_ERROR with no
 * detail.
 */
export const failureResponse = (
  error: unknown,
  dialect: CodeDialect
): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  if (isEnvelopeError(error)) return answerWith(envelopeAnswers, error, dialect)
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
