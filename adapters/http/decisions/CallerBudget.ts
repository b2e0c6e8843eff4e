import { Context, Layer } from "effect"
import type { RateBudget } from "../../../core/kernel/RateLimit.ts"

/**
 * The request budget of each caller key, one for every way a key is used: the HTTP caller plane and the
 * MCP endpoint take from the same budget (of `RateLimits`, shared by every instance on the same store), so a
 * key gets its quota once, not once per protocol nor once per instance.
 */
export class CallerBudget extends Context.Service<CallerBudget, RateBudget>()("adapters/http/decisions/CallerBudget") {
  /** `requestsPerMinute` per caller key. */
  static readonly layer = (requestsPerMinute: number) =>
    Layer.succeed(CallerBudget, {
      name: "decisions.caller",
      limit: requestsPerMinute,
      windowMillis: 60_000,
      whenStoreFails: "local"
    })
}
