import { Clock, Effect } from "effect"
import { takeHit, type RateLimitRule } from "../../core/kernel/RateLimit.ts"

/**
 * An in-process sliding-window limiter keyed by client (a caller key, a user). One server instance
 * enforces its own share; the numbers are per instance and documented as such.
 */
export const makeRateLimiter = (rule: RateLimitRule) => {
  const hits = new Map<string, ReadonlyArray<number>>()
  let sweeps = 0
  /** Answers undefined when allowed, else the seconds to wait. */
  return (client: string): Effect.Effect<number | undefined> =>
    Effect.map(Clock.currentTimeMillis, (now) => {
      const decision = takeHit(hits.get(client) ?? [], now, rule)
      hits.set(client, decision.hits)
      // Forget idle clients now and then, so the map stays the size of the active set.
      if (++sweeps % 1024 === 0) {
        for (const [key, times] of hits) if (times.every((t) => t <= now - rule.windowMs)) hits.delete(key)
      }
      return decision.allowed ? undefined : decision.retryAfterSeconds
    })
}

export type RateLimiter = ReturnType<typeof makeRateLimiter>
