/**
 * The apps speak only HTTP to their own origin, with the session cookie. Errors come back as the hub's
 * envelope `{error: {code, message}}` or the task inbox's `{error: "message"}`; both become an ApiError.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown
  ) {
    super(message)
  }
}

export interface RequestOptions {
  readonly body?: unknown
  readonly idempotencyKey?: string
  readonly signal?: AbortSignal
}

/** The task inbox's validation answer `{error, fields}`: each field's message, kept as the error's details. */
const fieldsOf = (fields: unknown): Record<string, string> | undefined =>
  typeof fields === "object" && fields !== null
    ? Object.fromEntries(
        Object.entries(fields).filter((entry): entry is [string, string] => typeof entry[1] === "string")
      )
    : undefined

const errorOf = (status: number, payload: unknown): ApiError => {
  const { error, fields } = (typeof payload === "object" && payload !== null ? payload : {}) as {
    error?: unknown
    fields?: unknown
  }
  if (typeof error === "string") return new ApiError(status, String(status), error, fieldsOf(fields))
  if (typeof error === "object" && error !== null) {
    const { code, message, details } = error as { code?: unknown; message?: unknown; details?: unknown }
    return new ApiError(
      status,
      typeof code === "string" ? code : String(status),
      typeof message === "string" ? message : "The request failed.",
      details
    )
  }
  if (status === 0) return new ApiError(0, "NETWORK", "The server could not be reached. Check your connection.")
  return new ApiError(status, String(status), `The request failed (${status}).`)
}

/** Sends a request and answers the parsed JSON body (`undefined` for an empty one), or throws an ApiError. */
export const request = async <T>(method: string, path: string, options: RequestOptions = {}): Promise<T> => {
  const headers: Record<string, string> = { accept: "application/json" }
  if (options.body !== undefined) headers["content-type"] = "application/json"
  if (options.idempotencyKey !== undefined) headers["idempotency-key"] = options.idempotencyKey
  let response: Response
  try {
    response = await fetch(path, {
      method,
      headers,
      credentials: "same-origin",
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      ...(options.signal !== undefined ? { signal: options.signal } : {})
    })
  } catch (cause) {
    if (cause instanceof DOMException && cause.name === "AbortError") throw cause
    throw errorOf(0, null)
  }
  const text = await response.text()
  let payload: unknown = undefined
  if (text.length > 0) {
    try {
      payload = JSON.parse(text)
    } catch {
      payload = null
    }
  }
  if (!response.ok) throw errorOf(response.status, payload)
  return payload as T
}

/** `{data: T}` answers unwrapped. */
export const getData = async <T>(path: string, signal?: AbortSignal): Promise<T> =>
  (await request<{ data: T }>("GET", path, signal !== undefined ? { signal } : {})).data

export const postData = async <T>(path: string, body?: unknown, idempotencyKey?: string): Promise<T> => {
  const answer = await request<{ data: T } | undefined>("POST", path, {
    ...(body !== undefined ? { body } : {}),
    ...(idempotencyKey !== undefined ? { idempotencyKey } : {})
  })
  return answer?.data as T
}

/** A fresh key per user action; a retry of the same action reuses it, so the server applies it once. */
export const newIdempotencyKey = () => crypto.randomUUID()
