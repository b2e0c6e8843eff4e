import { Context, type Effect } from "effect"
import type { RateLimited, Unavailable } from "./Errors.ts"

/**
 * A named budget: each client (a caller key, an address, a service) may make at most `limit` requests per
 * `windowMillis`. Budgets with the same `name` are one budget wherever they are taken (HTTP and MCP, every
 * server instance on the same store).
 */
export interface RateBudget {
  readonly name: string
  readonly limit: number
  readonly windowMillis: number
  /**
   * What a request meets while the shared store cannot answer: `refuse` (fail closed: the budget guards
   * sign-in or credential guessing, where letting requests through unchecked is the danger), or `local`
   * (this server instance counts the budget alone until the store answers again).
   */
  readonly whenStoreFails: "refuse" | "local"
}

/**
 * The one rate-limit port every limit takes from. `take` spends one request of the client's budget:
 * RateLimited (with the seconds to wait) once it is spent; Unavailable when the store cannot answer and the budget refuses in that case.
 * The client's name is the adapter's to keep or to hash.
 */
export class RateLimits extends Context.Service<
  RateLimits,
  {
    readonly take: (budget: RateBudget, client: string) => Effect.Effect<void, RateLimited | Unavailable>
  }
>()("core/kernel/RateLimits") {}
