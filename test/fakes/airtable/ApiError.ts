/** An answer of the stand-in other than 2xx, with the body the real API sends for it. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Readonly<Record<string, string>> = {}
  ) {
    super(`${status}`)
  }
}

/** The common shape: `{"error": {"type", "message"}}`. */
export const apiError = (status: number, type: string, message: string) =>
  new ApiError(status, { error: { type, message } })

export const notFound = () => new ApiError(404, { error: "NOT_FOUND" })

export const authenticationRequired = () => apiError(401, "AUTHENTICATION_REQUIRED", "Authentication required")

export const modelNotFound = () =>
  apiError(
    403,
    "INVALID_PERMISSIONS_OR_MODEL_NOT_FOUND",
    "Invalid permissions, or the requested model was not found. Check that both your user and your token have the required permissions, and that the model names and/or ids are correct."
  )

export const recordNotFound = () => apiError(404, "MODEL_ID_NOT_FOUND", "Record not found")

export const rateLimited = () => apiError(429, "RATE_LIMIT_REACHED", "Rate limit exceeded. Please try again later")

export const invalidRequest = (detail?: string) =>
  apiError(
    422,
    "INVALID_REQUEST_UNKNOWN",
    detail === undefined ? "Invalid request: parameter validation failed. Check your request data." : detail
  )

export const unknownFieldName = (name: string) => apiError(422, "UNKNOWN_FIELD_NAME", `Unknown field name: "${name}"`)

export const invalidValue = (field: string) =>
  apiError(422, "INVALID_VALUE_FOR_COLUMN", `Field "${field}" cannot accept the provided value`)

export const invalidFormula = (detail: string) =>
  apiError(422, "INVALID_FILTER_BY_FORMULA", `The formula for filtering records is invalid: ${detail}`)
