/**
 * A sliding-window rate limit: at most `limit` hits are allowed in any `windowMs`. Adapters keep one
 * window per client (memory map, later shared stores); time comes from the caller.
 */
export interface RateLimitRule {
  readonly limit: number
  readonly windowMs: number
}

export type RateAnswer = { readonly allowed: true } | { readonly allowed: false; readonly retryAfterSeconds: number }

const retryAfter = (oldest: number, nowMs: number, rule: RateLimitRule) =>
  Math.max(1, Math.ceil((oldest + rule.windowMs - nowMs) / 1000))

/**
 * One client's window, answered in constant time: a ring of the times of its last `limit` allowed hits.
 * A hit is allowed exactly when the oldest of those is out of the window (or there are fewer than `limit`):
 * that is the sliding window's own rule, so nothing is approximated and `Retry-After` is the time until that
 * oldest hit leaves the window. The ring grows with use up to `limit` times, never past it.
 */
export class HitWindow {
  private times: Float64Array
  private start = 0
  private size = 0

  constructor(rule: RateLimitRule) {
    this.times = new Float64Array(Math.max(1, Math.min(rule.limit, 8)))
  }

  take(nowMs: number, rule: RateLimitRule): RateAnswer {
    if (rule.limit < 1) return { allowed: false, retryAfterSeconds: retryAfter(nowMs, nowMs, rule) }
    if (this.size >= rule.limit) {
      const oldest = this.times[this.start]!
      if (oldest > nowMs - rule.windowMs) return { allowed: false, retryAfterSeconds: retryAfter(oldest, nowMs, rule) }
      // The oldest of the last `limit` hits left the window: its slot takes the new hit.
      this.times[this.start] = nowMs
      this.start = (this.start + 1) % this.times.length
      return { allowed: true }
    }
    if (this.size === this.times.length) this.grow(rule.limit)
    this.times[(this.start + this.size) % this.times.length] = nowMs
    this.size++
    return { allowed: true }
  }

  /** True once every hit it holds is out of the window: the client can be forgotten. */
  idle(nowMs: number, rule: RateLimitRule): boolean {
    if (this.size === 0) return true
    const newest = this.times[(this.start + this.size - 1) % this.times.length]!
    return newest <= nowMs - rule.windowMs
  }

  private grow(limit: number) {
    const next = new Float64Array(Math.min(limit, this.times.length * 2))
    for (let i = 0; i < this.size; i++) next[i] = this.times[(this.start + i) % this.times.length]!
    this.times = next
    this.start = 0
  }
}

export type RateDecision =
  | { readonly allowed: true; readonly hits: ReadonlyArray<number> }
  | { readonly allowed: false; readonly hits: ReadonlyArray<number>; readonly retryAfterSeconds: number }

/**
 * The same rule over a plain list of hit times, copied on every call (O(limit)): for small fixed limits
 * only. Busy paths use `HitWindow` (adapters/http/RateLimiter.ts).
 */
export const takeHit = (hits: ReadonlyArray<number>, nowMs: number, rule: RateLimitRule): RateDecision => {
  const recent = hits.filter((at) => at > nowMs - rule.windowMs)
  if (recent.length < rule.limit) return { allowed: true, hits: [...recent, nowMs] }
  return { allowed: false, hits: recent, retryAfterSeconds: retryAfter(recent[0]!, nowMs, rule) }
}
