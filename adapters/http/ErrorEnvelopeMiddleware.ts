import { ByteSize, Cause, Context, Effect, Option, Predicate } from "effect"
import { HttpRouter, HttpServerError, HttpServerRequest, HttpServerResponse, HttpIncomingMessage } from "effect/http"
import { HttpApiError } from "effect/http-api"
import { Readiness, schemaIssues, type FieldIssues } from "../../core/kernel/index.ts"
import {
  errorResponse,
  isOutage,
  validationCode,
  type CodeDialect,
  type ErrorRenderer,
  type ValidationCode
} from "./ErrorResponse.ts"
import { limitFor, type RouteLimits } from "./BodyLimit.ts"
import { rejectUnstorableText } from "./TextGuard.ts"

export const envelopeRenderer: ErrorRenderer = (_request, { code, ...options }) => errorResponse(code, options)

export interface ErrorEnvelopeOptions {
  readonly dialect: CodeDialect
  /** The service's request body limit in bytes; a route may declare its own (`MaxBodyBytes`). */
  readonly maxBodyBytes: number
  readonly routeLimits?: RouteLimits | undefined
  readonly render?: ErrorRenderer | undefined
}

/** The few body limits a service has, each made once. */
const byteSizes = new Map<number, ByteSize.ByteSize>()
const byteSizeOf = (bytes: number) => {
  let size = byteSizes.get(bytes)
  if (size === undefined) {
    size = ByteSize.bytes(bytes)
    if (byteSizes.size < 64) byteSizes.set(bytes, size)
  }
  return size
}

const slotOf = { Params: "path", Query: "query", Headers: "header", Payload: "body" } as const

/** A refusal by the contract's schemas names each bad field where the request carried it. */
export const validationDetails = (error: HttpApiError.HttpApiSchemaError): FieldIssues =>
  schemaIssues(slotOf[error.kind as keyof typeof slotOf] ?? "body", error.cause.issue)

const isInvalidJson = (error: HttpApiError.HttpApiSchemaError) =>
  error.kind === "Payload" && error.cause.issue._tag === "InvalidValue" && /valid JSON/.test(error.cause.message)

/**
 * Every failure on every route is the envelope with its status. This router-wide middleware catches what the
 * handlers do not answer themselves: unknown paths, schema failures, malformed JSON, oversized bodies, and
 * defects. A defect while the database cannot be reached is an outage, 503 UNAVAILABLE, and service resumes
 * by itself when the database is back; any other is logged and answered INTERNAL_ERROR without detail (see
 * `isOutage`; the service's Readiness, when it has one, is the database's ping). It also turns bare error
 * responses of the HTTP toolkit (415, 405, an empty 413) into the envelope.
 */
export const errorEnvelopeMiddleware = (options: ErrorEnvelopeOptions) => {
  const render = options.render ?? envelopeRenderer
  const validation = validationCode(options.dialect)
  const tooLarge = options.dialect === "decisions" ? "payload_too_large" : "PAYLOAD_TOO_LARGE"

  const fromCause = (
    request: HttpServerRequest.HttpServerRequest,
    cause: Cause.Cause<unknown>,
    limitBytes: number,
    readiness: Option.Option<Readiness["Service"]>
  ) => {
    const failure = Cause.findErrorOption(cause)
    const defect = Option.isNone(failure) ? Cause.findDefect(cause) : undefined
    const error: unknown = Option.isSome(failure)
      ? failure.value
      : defect && defect._tag === "Success"
        ? defect.success
        : undefined

    if (HttpServerError.isHttpServerError(error)) {
      const reason = error.reason
      if (reason._tag === "RouteNotFound") return Effect.succeed(render(request, { code: "NOT_FOUND" }))
      if (reason._tag === "RequestParseError" && reason.reason === "BodyTooLarge") {
        return Effect.succeed(render(request, { code: tooLarge, details: { limitBytes } }))
      }
      if (reason._tag === "RequestParseError") {
        return Effect.succeed(render(request, { code: validation, message: "The request body could not be read." }))
      }
    }
    if (HttpApiError.HttpApiSchemaError.is(error) && error.kind !== "Body" && error.kind !== "ResponseHeaders") {
      if (isInvalidJson(error)) return Effect.succeed(render(request, { code: "INVALID_JSON" }))
      return Effect.succeed(render(request, { code: validation, details: validationDetails(error) }))
    }
    if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
    return Effect.flatMap(isOutage(cause, readiness), (outage) =>
      outage
        ? Effect.as(
            Effect.logWarning("the database cannot be reached", cause),
            render(request, { code: "UNAVAILABLE", outage: true })
          )
        : Effect.as(Effect.logError("unexpected failure", cause), render(request, { code: "INTERNAL_ERROR" }))
    )
  }

  return HttpRouter.middleware(
    Effect.gen(function* () {
      // Optional, so routes served without a database (tests, embedders) need not provide one.
      const readiness = yield* Effect.serviceOption(Readiness)
      return (httpEffect) => {
        const guarded = rejectUnstorableText(httpEffect, render, validation)
        return Effect.withFiber((fiber) => {
          const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
          // The limit is chosen before anything reads the body (the text check reads it first).
          const limitBytes = limitFor(options.routeLimits, options.maxBodyBytes, request.method, request.url)
          const toEnvelope = (response: HttpServerResponse.HttpServerResponse) =>
            bareErrorToEnvelope(request, response, render, validation, tooLarge)
          return Effect.matchCauseEffect(
            Effect.provideService(guarded, HttpIncomingMessage.MaxBodySize, byteSizeOf(limitBytes)),
            {
              onFailure: (cause) => Effect.map(fromCause(request, cause, limitBytes, readiness), toEnvelope),
              onSuccess: (response) => Effect.succeed(toEnvelope(response))
            }
          )
        })
      }
    }),
    { global: true }
  )
}

const bareErrorToEnvelope = (
  request: HttpServerRequest.HttpServerRequest,
  response: HttpServerResponse.HttpServerResponse,
  render: ErrorRenderer,
  validation: ValidationCode,
  tooLarge: "payload_too_large" | "PAYLOAD_TOO_LARGE"
) => {
  if (response.status < 400) return response
  const contentType = response.headers["content-type"] ?? ""
  // A page written for a browser (the hub's "this sign-in link cannot be used") is an answer of its own.
  if (contentType.includes("json") || contentType.startsWith("text/html")) return response
  switch (response.status) {
    case 413:
      return render(request, { code: tooLarge })
    case 415:
      return render(request, {
        code: validation,
        status: 415,
        message: "The request body must be JSON (Content-Type: application/json)."
      })
    case 404:
      return render(request, { code: "NOT_FOUND" })
    case 401:
      return render(request, { code: "UNAUTHORIZED" })
    case 400:
      return render(request, { code: validation })
    default:
      return Predicate.isNumber(response.status) && response.status >= 500
        ? render(request, { code: "INTERNAL_ERROR" })
        : response
  }
}
