import { Clock, Effect, Redacted } from "effect"
import { HttpServerRequest, type HttpServerResponse } from "effect/http"
import { verify } from "../../../core/auth/Signature.ts"
import { isKeyedCaller, type ContextKeys, type KeyedCaller } from "../../../core/hub/ContextKeys.ts"
import { RateLimits } from "../../../core/kernel/RateLimit.ts"
import { errorResponse } from "../ErrorResponse.ts"
import { budgetRefusal } from "../RateLimits.ts"

/** Everything after the first `?`, byte for byte as the caller sent it: exactly what the caller signed. */
export const rawQueryString = (url: string): string => {
  const at = url.indexOf("?")
  return at < 0 ? "" : url.slice(at + 1)
}

/** One route family of the AUTH-6 plane: who it admits, what they sign, and their quota. */
export interface ContextSignaturePlane {
  /** The parsed `HUB_CONTEXT_KEYS`; without any key every call answers 501. */
  readonly contextKeys: ContextKeys
  /** Per-caller quota, a minute, shared by every instance on the same rate-limit store. */
  readonly requestsPerMinute: number
  /** The quota's name: callers spend one budget per name. */
  readonly budget: string
  /** The ids the routes admit; any other id gets the same 401 as a bad signature. */
  readonly admits: (caller: KeyedCaller) => boolean
  /** The 501's message when no context key is configured. */
  readonly notConfigured: string
}

/**
 * AUTH-6, the one verifier of the hub's signed routes. Every refusal (no or bad signature, a stale or future
 * timestamp, missing headers, an id the route does not admit or that has no key) is the same 401, built by
 * the same call, so the bytes give nothing away. The quota is counted only for a verified caller, so nobody
 * can spend another caller's share. Answers the verified caller, or the response to send instead.
 */
export const contextSignatureCheck = (plane: ContextSignaturePlane) =>
  Effect.gen(function* () {
    const limits = yield* RateLimits
    const budget = {
      name: plane.budget,
      limit: plane.requestsPerMinute,
      windowMillis: 60_000,
      whenStoreFails: "local"
    } as const
    return (
      credential: Redacted.Redacted<string>
    ): Effect.Effect<KeyedCaller | HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest> =>
      Effect.gen(function* () {
        if (!plane.contextKeys.configured) return errorResponse("NOT_CONFIGURED", { message: plane.notConfigured })
        const request = yield* HttpServerRequest.HttpServerRequest
        const caller = request.headers["x-workspace-service-id"] ?? ""
        // A read (GET) signs its raw query string, a change its raw body: `<X-Platform-Timestamp>.<payload>`.
        const payload =
          request.method === "GET" || request.method === "HEAD"
            ? rawQueryString(request.url)
            : yield* request.arrayBuffer.pipe(
                Effect.map((buffer) => new Uint8Array(buffer)),
                Effect.orElseSucceed(() => undefined)
              )
        const nowSeconds = Math.floor((yield* Clock.currentTimeMillis) / 1000)
        if (
          !isKeyedCaller(caller) ||
          !plane.admits(caller) ||
          payload === undefined ||
          !verify({
            secret: plane.contextKeys.keyFor(caller),
            timestamp: request.headers["x-platform-timestamp"],
            signature: Redacted.value(credential),
            payload,
            nowSeconds
          })
        ) {
          return errorResponse("UNAUTHORIZED")
        }
        const refused = yield* budgetRefusal(limits, budget, caller)
        return refused ?? caller
      })
  })
