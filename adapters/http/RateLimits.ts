import { Duration, Effect, Layer } from "effect"
import type { HttpServerResponse } from "effect/http"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { createHash } from "node:crypto"
import { RateLimited, Unavailable } from "../../core/kernel/Errors.ts"
import { RateLimits, type RateBudget } from "../../core/kernel/RateLimit.ts"
import { coalesceFixedWindow, leaseTokens } from "./CoalescedRateLimiterStore.ts"
import { errorResponse } from "./ErrorResponse.ts"

interface Plan {
  readonly window: Duration.Duration
  readonly refillRate: Duration.Duration
}

/** How long a request waits for the shared store before the budget's `whenStoreFails` rule applies. */
const storeTimeout = Duration.seconds(1)

const seconds = (millis: number) => Math.max(1, Math.ceil(millis / 1000))

/** The hashed keys of the clients seen lately, so that a busy client's key is hashed once, not per request. */
const hashedKeys = new Map<string, string>()
const hashedKeysKept = 4096

/** Clients are kept hashed: the store holds no address or key id, and every key has the same length. */
const keyOf = (budget: RateBudget, client: string) => {
  const plain = `${budget.name}\n${client}`
  const known = hashedKeys.get(plain)
  if (known !== undefined) return known
  const key = `${budget.name}:${createHash("sha256").update(client).digest("base64url").slice(0, 32)}`
  if (hashedKeys.size >= hashedKeysKept) hashedKeys.clear()
  hashedKeys.set(plain, key)
  return key
}

/**
 * The rate-limit port over effect's `RateLimiter` and the `RateLimiterStore` the server chose (Redis,
 * Postgres, or memory): every instance on the same store spends the same budgets. The algorithm is the
 * fixed window: a client's window opens at its first request and each request admitted extends it by
 * `window / limit`; once `limit` requests are in it, requests are refused until it closes (that is the
 * `Retry-After`), and then the budget is whole again. No window admits more than `limit`, whichever
 * instances its requests reach. A key's concurrent requests share one store call, and a call may take up to
 * 15 tokens ahead of its requests (a lease, at most an eighth of what the window has left) that answer the
 * key's next requests here without a call (CoalescedRateLimiterStore.ts). A client within its rate whose
 * requests reach one instance is never refused (but for a lease given up, a call's latency early, as its
 * window ends); across `n` instances it may be refused while the others still hold leased tokens of its
 * window, 15 each at most, which its requests reaching them spend: at least `limit - 15 * (n - 1)` pass in a
 * window.
 *
 * When the store fails or a request has waited a second for it (the coalesced store keeps that bound with one
 * timer per store call, none per request), a `refuse` budget answers Unavailable, and a `local`
 * budget is counted in this process alone (each instance then grants the whole budget) until the store
 * answers again. The first failure and the recovery are logged, not every request.
 */
export const RateLimitsFromStore: Layer.Layer<RateLimits, never, RateLimiter.RateLimiterStore> = Layer.effect(
  RateLimits,
  Effect.gen(function* () {
    const store = yield* coalesceFixedWindow(yield* RateLimiter.RateLimiterStore, storeTimeout, leaseTokens)
    const local = yield* RateLimiter.make.pipe(Effect.provide(RateLimiter.layerStoreMemory))
    let degraded = false

    const recovered: Effect.Effect<void> = Effect.suspend(() => {
      if (!degraded) return Effect.void
      degraded = false
      return Effect.logInfo("the rate-limit store answers again; budgets are shared again")
    })

    const failed = (error: RateLimiter.RateLimiterError): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (degraded) return Effect.void
        degraded = true
        return Effect.logWarning(
          "the rate-limit store failed; sign-in budgets refuse and the others count per instance until it answers",
          error
        )
      })

    const exceeded = (reason: RateLimiter.RateLimitExceeded) =>
      new RateLimited({ retryAfterSeconds: seconds(Duration.toMillis(reason.retryAfter)) })

    /** What a budget's takes send to the store, worked out once per budget rather than per request. */
    const plans = new WeakMap<RateBudget, Plan>()
    const planOf = (budget: RateBudget): Plan => {
      let plan = plans.get(budget)
      if (plan === undefined) {
        // The window and its refill as `RateLimiter.consume` works them out.
        const window = Duration.max(Duration.millis(budget.windowMillis), Duration.millis(1))
        plan = { window, refillRate: Duration.divideUnsafe(window, budget.limit) }
        plans.set(budget, plan)
      }
      return plan
    }

    const whenTheStoreFails = (
      budget: RateBudget,
      plan: Plan,
      key: string,
      error: RateLimiter.RateLimiterError
    ): Effect.Effect<void, RateLimited | Unavailable> => {
      if (budget.whenStoreFails === "refuse") return Effect.andThen(failed(error), Effect.fail(new Unavailable({})))
      return Effect.andThen(
        failed(error),
        local
          .consume({ algorithm: "fixed-window", onExceeded: "fail", window: plan.window, limit: budget.limit, key })
          .pipe(
            Effect.asVoid,
            Effect.catch((again) =>
              again.reason._tag === "RateLimitExceeded" ? Effect.fail(exceeded(again.reason)) : Effect.die(again)
            )
          )
      )
    }

    return RateLimits.of({
      take: (budget, client) => {
        if (budget.limit < 1) return Effect.fail(new RateLimited({ retryAfterSeconds: seconds(budget.windowMillis) }))
        const plan = planOf(budget)
        const key = keyOf(budget, client)
        // One fixed-window take of one token, answered as `RateLimiter.consume` answers it (a count past the
        // limit is refused until the window's end), without its per-request durations and result. The
        // coalesced store answers within `storeTimeout` or fails as slow (CoalescedRateLimiterStore.ts).
        return Effect.matchEffect(
          store.fixedWindow({ key, tokens: 1, refillRate: plan.refillRate, limit: budget.limit }),
          {
            onSuccess: ([count, ttl]): Effect.Effect<void, RateLimited> =>
              count > budget.limit
                ? Effect.andThen(recovered, Effect.fail(new RateLimited({ retryAfterSeconds: seconds(ttl) })))
                : recovered,
            onFailure: (error) => whenTheStoreFails(budget, plan, key, error)
          }
        )
      }
    })
  })
)

/** Budgets kept in this process's memory: the embedded database (one process owns DATA_DIR) and tests. */
export const RateLimitsMemory: Layer.Layer<RateLimits> = RateLimitsFromStore.pipe(
  Layer.provide(RateLimiter.layerStoreMemory)
)

/**
 * Takes one request from the client's budget: undefined when the request may go on, else the envelope's
 * answer (429 RATE_LIMITED with `Retry-After`, or 503 UNAVAILABLE with `Retry-After` while a refusing budget's
 * store is down).
 */
export const budgetRefusal = (
  limits: RateLimits["Service"],
  budget: RateBudget,
  client: string
): Effect.Effect<HttpServerResponse.HttpServerResponse | undefined> =>
  limits.take(budget, client).pipe(
    Effect.as(undefined),
    Effect.catchTags({
      RateLimited: (e) =>
        Effect.succeed(errorResponse("RATE_LIMITED", { headers: { "retry-after": String(e.retryAfterSeconds) } })),
      Unavailable: () => Effect.succeed(errorResponse("UNAVAILABLE", { headers: { "retry-after": "30" } }))
    })
  )
