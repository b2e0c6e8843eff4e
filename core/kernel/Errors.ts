import { Schema } from "effect"
import { FieldIssues } from "./FieldIssue.ts"

// The platform's domain errors: one class per entry of the platform's error taxonomy that the core itself can
// raise. They carry no HTTP knowledge; adapters/http maps each to its code and status (core/kernel/ErrorCode.ts).
// `message` is always user-safe text written by us, never an upstream's words.

/**
 * The request is refused as it stands. `details` names each bad field with where it was
 * (core/kernel/FieldIssue.ts); a refusal about no one field leaves them out.
 */
export class ValidationError extends Schema.TaggedError<ValidationError>()("ValidationError", {
  message: Schema.String,
  details: Schema.optionalKey(FieldIssues)
}) {}

export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {}) {}

export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  message: Schema.optionalKey(Schema.String)
}) {}

/** A missing row and someone else's row are the same NotFound. */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  message: Schema.optionalKey(Schema.String)
}) {}

/** The row already exists (a taken service id or email, an existing membership). */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", {
  message: Schema.String
}) {}

export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", {
  limitBytes: Schema.Number
}) {}

export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  retryAfterSeconds: Schema.Number
}) {}

export class NotConfigured extends Schema.TaggedError<NotConfigured>()("NotConfigured", {
  message: Schema.optionalKey(Schema.String)
}) {}

/** A dependency failed; the cause is kept for logs and never shown. */
export class UpstreamError extends Schema.TaggedError<UpstreamError>()("UpstreamError", {
  message: Schema.optionalKey(Schema.String),
  cause: Schema.optionalKey(Schema.Defect())
}) {}

/** A dependency needed to authorize is down: deny. */
export class Unavailable extends Schema.TaggedError<Unavailable>()("Unavailable", {
  message: Schema.optionalKey(Schema.String),
  cause: Schema.optionalKey(Schema.Defect())
}) {}
