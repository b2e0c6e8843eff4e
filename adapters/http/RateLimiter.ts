import { Clock, Effect } from "effect"
import { HitWindow, type RateLimitRule } from "../../core/kernel/RateLimit.ts"

/**
 * An in-process sliding-window limiter keyed by client (a caller key, a user), constant time per request
 * whatever the quota. One server instance enforces its own share; the numbers are per instance and
 * documented as such.
 */
export const makeRateLimiter = (rule: RateLimitRule) => {
  const windows = new Map<string, HitWindow>()
  let sweeps = 0
  /** Answers undefined when allowed, else the seconds to wait. */
  return (client: string): Effect.Effect<number | undefined> =>
    Effect.map(Clock.currentTimeMillis, (now) => {
      let window = windows.get(client)
      if (window === undefined) {
        window = new HitWindow(rule)
        windows.set(client, window)
      }
      const answer = window.take(now, rule)
      // Forget idle clients now and then, so the map stays the size of the active set.
      if (++sweeps % 1024 === 0) {
        for (const [key, held] of windows) if (held.idle(now, rule)) windows.delete(key)
      }
      return answer.allowed ? undefined : answer.retryAfterSeconds
    })
}

export type RateLimiter = ReturnType<typeof makeRateLimiter>
