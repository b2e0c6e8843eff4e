/**
 * The error taxonomy of the platform contract ("Errors"), plus the service-specific codes of the decisions and task inbox contracts.
 * Codes are data: a domain error names its code, and the HTTP adapter reads the status from here.
 */
export const ErrorTaxonomy = {
  VALIDATION_ERROR: { status: 400, message: "The request failed validation." },
  INVALID_JSON: { status: 400, message: "The request body is not valid JSON." },
  UNKNOWN_EVENT_TYPE: { status: 400, message: "The event type is not in the catalog." },
  UNAUTHORIZED: { status: 401, message: "Missing or invalid credentials." },
  FORBIDDEN: { status: 403, message: "You are not allowed to do this." },
  EMBED_NOT_CONSENTED: { status: 403, message: "The organization has not consented to embedding this app." },
  NOT_FOUND: { status: 404, message: "Not found." },
  // The hub's own code: the row already exists.
  CONFLICT: { status: 409, message: "That already exists." },
  PAYLOAD_TOO_LARGE: { status: 413, message: "The request body is too large." },
  RATE_LIMITED: { status: 429, message: "Too many requests. Retry later." },
  INTERNAL_ERROR: { status: 500, message: "Something went wrong on our side." },
  NOT_CONFIGURED: { status: 501, message: "This feature is not configured." },
  UPSTREAM_ERROR: { status: 502, message: "A service we depend on is not responding. Retry later." },
  UNAVAILABLE: { status: 503, message: "The service is temporarily unavailable. Retry later." },
  // The decisions contract (decisions): lower-case codes; conflict and payload-too-large statuses are ours (409, 413).
  validation_error: { status: 400, message: "The request failed validation." },
  unknown_role: { status: 400, message: "The role is not known." },
  unknown_template: { status: 400, message: "The template is not known." },
  invalid_transition: { status: 409, message: "That is not allowed in the decision's current status." },
  idempotency_conflict: { status: 409, message: "The Idempotency-Key was already used for a different request." },
  idempotency_in_progress: { status: 409, message: "A request with this Idempotency-Key is still being processed." },
  payload_too_large: { status: 413, message: "The request body is too large." }
} as const satisfies Record<string, { readonly status: number; readonly message: string }>

export type ErrorCode = keyof typeof ErrorTaxonomy

export const isErrorCode = (code: string): code is ErrorCode => Object.hasOwn(ErrorTaxonomy, code)

export const statusOf = (code: ErrorCode): number => ErrorTaxonomy[code].status
