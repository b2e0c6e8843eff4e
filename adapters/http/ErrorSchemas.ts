import { Schema } from "effect"
import { HttpApiSchema } from "effect/http-api"
import { ErrorEnvelopeSchema } from "../../core/kernel/index.ts"

/**
 * The envelope at a given status, for the contract's documentation. Handlers answer failures with
 * `errorResponse` themselves, so these schemas describe responses rather than encode them.
 */
const at = (status: number, description: string) =>
  ErrorEnvelopeSchema.annotate({ description }).pipe(HttpApiSchema.status(status))

export const ErrorResponses = {
  badRequest: at(400, "Validation failed, malformed JSON, or a service-specific 400 code"),
  unauthorized: at(401, "Missing or invalid credentials"),
  forbidden: at(403, "Authenticated but not entitled"),
  notFound: at(404, "Missing or not owned; never says which"),
  conflict: at(409, "invalid_transition, idempotency_conflict or idempotency_in_progress"),
  payloadTooLarge: at(413, "The body exceeds the route's limit"),
  rateLimited: at(429, "Throttled; see Retry-After"),
  internal: at(500, "Unexpected; no detail is given"),
  notConfigured: at(501, "Not configured"),
  upstream: at(502, "A dependency failed"),
  unavailable: at(503, "Not ready, or a required key is unset in production")
} as const satisfies Record<string, Schema.Top>
