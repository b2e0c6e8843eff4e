import { Schema } from "effect"
import type { ErrorCode } from "./ErrorCode.ts"
import { safeMessage } from "./SafeMessage.ts"

/** Every success is `{data}`, every failure `{error: {code, message, details?}}`. */
export interface ErrorBody {
  readonly code: string
  readonly message: string
  /** A validation error's bad fields (`FieldIssues`, core/kernel/FieldIssue.ts); what other codes describe. */
  readonly details?: unknown
}

export interface ErrorEnvelope {
  readonly error: ErrorBody
}

/** Builds a failure envelope; the message passes the user-safety guard or is replaced by the code's own. */
export const failure = (code: ErrorCode, message?: string, details?: unknown): ErrorEnvelope => ({
  error:
    details === undefined
      ? { code, message: safeMessage(code, message) }
      : { code, message: safeMessage(code, message), details }
})

export const Data = <S extends Schema.Top>(data: S) => Schema.Struct({ data })

export const ErrorEnvelopeSchema = Schema.Struct({
  error: Schema.Struct({
    code: Schema.String,
    message: Schema.String,
    details: Schema.optionalKey(Schema.Unknown).annotateKey({
      description:
        "A validation error's bad fields, one entry each: [{in, field, message}], `in` one of body, query, " +
        'path, header and `field` "" for the whole of that place. Other codes say what they describe ' +
        "(validRoles, validTemplates, limitBytes, status)."
    })
  })
}).annotate({ identifier: "ErrorEnvelope" })
