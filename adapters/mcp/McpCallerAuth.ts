import { Effect, Redacted } from "effect"
import { HttpRouter } from "effect/http"
import { HttpApiBuilder, HttpApiSecurity } from "effect/http-api"
import { CallerAuthentication } from "../../core/decisions/CallerAuthentication.ts"
import { RateLimits } from "../../core/kernel/RateLimit.ts"
import { CallerBudget } from "../http/decisions/CallerBudget.ts"
import { CurrentCaller } from "../http/decisions/Auth.ts"
import { errorResponse } from "../http/ErrorResponse.ts"
import { budgetRefusal } from "../http/RateLimits.ts"

/**
 * The caller plane on `/mcp`: `Authorization: Bearer dcd_<key>` must name an
 * active caller key, checked on every HTTP request of the MCP transport, before any JSON-RPC is read. Every
 * request takes from the key's one budget (`CallerBudget`), shared with the HTTP caller plane. A refusal is
 * the platform's envelope with 401 (or 429 with `Retry-After`), as on the HTTP caller plane.
 */
export const McpCallerAuth = HttpRouter.middleware<{ provides: CurrentCaller }>()(
  Effect.gen(function* () {
    const callers = yield* CallerAuthentication
    const budget = yield* CallerBudget
    const limits = yield* RateLimits
    return (httpEffect) =>
      Effect.gen(function* () {
        const credential = yield* HttpApiBuilder.securityDecode(HttpApiSecurity.bearer)
        const caller = yield* callers.authenticate(Redacted.value(credential))
        if (caller === undefined) return errorResponse("UNAUTHORIZED")
        const refused = yield* budgetRefusal(limits, budget, `key:${caller.keyId}`)
        if (refused !== undefined) return refused
        return yield* Effect.provideService(httpEffect, CurrentCaller, caller)
      })
  })
)
