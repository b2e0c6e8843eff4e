import { Context, Layer } from "effect"
import { makeRateLimiter, type RateLimiter } from "../RateLimiter.ts"

/**
 * The request budget of each caller key, one for every way a key is used: the HTTP caller plane and the
 * MCP endpoint take from the same budget, so a key gets its quota once, not once per protocol.
 */
export class CallerBudget extends Context.Service<CallerBudget, RateLimiter>()("adapters/http/decisions/CallerBudget") {
  /** `requestsPerMinute` per caller key (per server instance). */
  static readonly layer = (requestsPerMinute: number) =>
    Layer.sync(CallerBudget, () => makeRateLimiter({ limit: requestsPerMinute, windowMs: 60_000 }))
}
