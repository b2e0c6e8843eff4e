/**
 * A sliding-window rate limit as a pure function: the state is the list of recent hit times of one
 * client. Adapters keep the states (memory map, later shared stores); time comes from the caller.
 */
export interface RateLimitRule {
  readonly limit: number
  readonly windowMs: number
}

export type RateDecision =
  | { readonly allowed: true; readonly hits: ReadonlyArray<number> }
  | { readonly allowed: false; readonly hits: ReadonlyArray<number>; readonly retryAfterSeconds: number }

export const takeHit = (hits: ReadonlyArray<number>, nowMs: number, rule: RateLimitRule): RateDecision => {
  const recent = hits.filter((at) => at > nowMs - rule.windowMs)
  if (recent.length < rule.limit) return { allowed: true, hits: [...recent, nowMs] }
  const oldest = recent[0]!
  return {
    allowed: false,
    hits: recent,
    retryAfterSeconds: Math.max(1, Math.ceil((oldest + rule.windowMs - nowMs) / 1000))
  }
}
