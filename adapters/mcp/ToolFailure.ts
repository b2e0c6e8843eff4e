import { Cause, Effect, Option, Schema, SchemaIssue } from "effect"
import { ErrorEnvelopeSchema, failure, type ErrorEnvelope } from "../../core/kernel/index.ts"
import { failureResponse, isOutage } from "../http/ErrorResponse.ts"

/** A tool error carries the envelope the HTTP adapter answers: `{error: {code, message, details?}}`. */
export const ToolFailure = ErrorEnvelopeSchema

export interface Answered {
  readonly status: number
  readonly envelope: ErrorEnvelope
}

const decoder = new TextDecoder()

/**
 * The status and envelope the HTTP adapter answers for an error, read from the response it builds, so the
 * tools and the HTTP planes cannot drift apart (same code, message and details; unknown errors are logged
 * and answered INTERNAL_ERROR without detail).
 */
export const answerFor = (error: unknown): Effect.Effect<Answered> =>
  Effect.map(failureResponse(error, "decisions"), (response) => {
    const body = response.body
    if (body._tag !== "Uint8Array") return { status: 500, envelope: failure("INTERNAL_ERROR") }
    return { status: response.status, envelope: JSON.parse(decoder.decode(body.body)) as ErrorEnvelope }
  })

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * Tool arguments are decoded here rather than by the MCP layer, whose decode failures are JSON-RPC errors
 * without our code: a bad argument is a tool error `validation_error` naming each bad field, as on HTTP.
 */
export const decodeArguments =
  <S extends Schema.Codec<any, any, never, never>>(schema: S) =>
  (input: unknown): Effect.Effect<S["Type"], ErrorEnvelope> =>
    Schema.decodeUnknownEffect(schema)(input ?? {}, { errors: "all", onExcessProperty: "ignore" }).pipe(
      Effect.mapError((error) => {
        const details = formatIssues(error.issue).issues.map((issue) => ({
          in: "arguments",
          field: (issue.path ?? []).map((s) => String(typeof s === "object" ? s.key : s)).join("."),
          message: issue.message
        }))
        const named = [...new Set(details.map((d) => d.field || "(arguments)"))].join(", ")
        return failure("validation_error", `Invalid arguments: ${named}.`, details)
      })
    )

/**
 * Turns whatever a tool's work failed with into its tool error. Domain errors map like the HTTP envelope;
 * a lost database connection is UNAVAILABLE; any other defect is logged with its cause and answered
 * INTERNAL_ERROR (never a stack trace); interruption passes.
 */
export const toToolFailure = <A, R>(effect: Effect.Effect<A, unknown, R>): Effect.Effect<A, ErrorEnvelope, R> =>
  Effect.catchCause(effect, (cause) => {
    if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
    const error = Cause.findErrorOption(cause)
    if (error._tag === "Some") {
      const value = error.value
      if (Schema.is(ToolFailure)(value)) return Effect.fail(value)
      return Effect.flatMap(answerFor(value), ({ envelope }) => Effect.fail(envelope))
    }
    // A database that cannot be reached is UNAVAILABLE, as on the HTTP routes.
    return Effect.flatMap(isOutage(cause, Option.none()), (outage) =>
      outage
        ? Effect.fail(failure("UNAVAILABLE"))
        : Effect.logError("tool failed", cause).pipe(Effect.andThen(Effect.fail(failure("INTERNAL_ERROR"))))
    )
  })
