import { Schema } from "effect"

/**
 * The request headers the routes read, declared in the contracts so that they appear in the OpenAPI
 * documents and in a typed client. Names are lower case, as Node hands them to the routes. The middleware
 * that checks a header runs before the contract decodes it, so a missing or bad credential keeps its own
 * answer (401 for a credential, the idempotency rules for `Idempotency-Key`); the declarations describe
 * the headers and never refuse a request the middleware let through.
 */
const header = (description: string) => Schema.String.annotate({ description })

const idempotencyKeyText =
  "1 to 255 visible ASCII characters. The first response is kept 24 hours and replayed for the same key " +
  "and request; the same key with another request is 409 idempotency_conflict."

/** A mutation that honours `Idempotency-Key` when it is sent. */
export const IdempotencyKeyOptional = {
  "idempotency-key": Schema.optionalKey(header(`Optional. ${idempotencyKeyText}`))
} as const

/** A mutation that needs `Idempotency-Key` (a missing one is a validation error naming the header). */
export const IdempotencyKeyRequired = {
  "idempotency-key": header(`Required. ${idempotencyKeyText}`)
} as const

/**
 * The decisions workspace plane: the service key and a person's identity token. Both are needed; the
 * middleware answers 401 before the contract reads them.
 */
export const DecisionsWorkspaceHeaders = {
  "x-decisions-api-key": header("The decisions service key the hub sends with every call."),
  "x-workspace-token": header("An identity token of the person (audience decisions), minted by the hub.")
} as const

/** The task inbox's API: a user's or an operator machine key, or else the session cookie. */
export const TasksApiKeyHeaders = {
  "x-api-key": Schema.optionalKey(header("A user's API key or an operator machine key; without it, the session."))
} as const

/**
 * A signed call of the hub's service-data plane: the caller's name, the time and the HMAC over
 * `<timestamp>.<signed part>` with the caller's key. The middleware checks all three and answers 401 before
 * the contract reads them.
 */
export const PlatformSignatureHeaders = {
  "x-workspace-service-id": header("The calling service's id."),
  "x-platform-timestamp": header("Unix seconds when the call was signed."),
  "x-platform-signature": header("v1=<hex HMAC-SHA256> with the caller's key.")
} as const
