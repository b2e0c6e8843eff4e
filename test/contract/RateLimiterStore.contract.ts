import { assert, describe, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import * as RateLimiter from "effect/persistence/RateLimiter"
import { randomUUID } from "node:crypto"

const fresh = () => `k_${randomUUID()}`

/** The reason a consume was refused, or undefined when it was admitted. */
const refusal = <A>(consume: Effect.Effect<A, RateLimiter.RateLimiterError>) =>
  consume.pipe(
    Effect.as(undefined),
    Effect.catch((error) =>
      error.reason._tag === "RateLimitExceeded" ? Effect.succeed(error.reason) : Effect.fail(error)
    )
  )

const count = (admitted: ReadonlyArray<RateLimiter.RateLimitExceeded | undefined>) =>
  admitted.filter((reason) => reason === undefined).length

/**
 * effect's `RateLimiterStore` port, run once per store (memory, Redis, SQL on PGlite and Postgres) through the
 * `RateLimiter` that every limit of the platform uses. The stores keep their own clocks (Redis and Postgres
 * count on the server's), so time here is real: windows are short and each wait is the answer's own.
 */
export const RateLimiterStoreContract = (name: string, store: Layer.Layer<RateLimiter.RateLimiterStore, unknown>) =>
  describe(`RateLimiterStore contract (${name})`, () =>
    layer(RateLimiter.layer.pipe(Layer.provideMerge(store)), { excludeTestServices: true, timeout: "30 seconds" })(
      (it) => {
        it.effect("a fixed window admits its limit, then refuses until it closes, with the time to wait", () =>
          Effect.gen(function* () {
            const limiter = yield* RateLimiter.RateLimiter
            const options = { algorithm: "fixed-window", window: "3 seconds", limit: 3, key: fresh() } as const
            const remaining: Array<number> = []
            for (let i = 0; i < 3; i++) remaining.push((yield* limiter.consume(options)).remaining)
            assert.deepStrictEqual(remaining, [2, 1, 0])
            const refused = yield* refusal(limiter.consume(options))
            assert.isDefined(refused)
            const wait = Duration.toMillis(refused!.retryAfter)
            assert.isTrue(wait > 0 && wait <= 3000, `waits ${wait} ms`)
            // Another key is a budget of its own.
            assert.strictEqual((yield* limiter.consume({ ...options, key: fresh() })).remaining, 2)
          })
        )

        it.effect("once the window closes the budget is whole again", () =>
          Effect.gen(function* () {
            const limiter = yield* RateLimiter.RateLimiter
            const options = { algorithm: "fixed-window", window: "600 millis", limit: 2, key: fresh() } as const
            yield* limiter.consume(options)
            yield* limiter.consume(options)
            const refused = yield* refusal(limiter.consume(options))
            assert.isDefined(refused)
            yield* Effect.sleep(Duration.sum(refused!.retryAfter, Duration.millis(100)))
            assert.strictEqual((yield* limiter.consume(options)).remaining, 1)
          })
        )

        it.effect("a refusal leaves the window alone: the count answered passes the limit, the end does not move", () =>
          Effect.gen(function* () {
            const store = yield* RateLimiter.RateLimiterStore
            const key = fresh()
            const take = store.fixedWindow({ key, tokens: 1, refillRate: Duration.seconds(1), limit: 2 })
            const [first, firstTtl] = yield* take
            const [second, secondTtl] = yield* take
            assert.deepStrictEqual([first, second], [1, 2])
            assert.isTrue(firstTtl <= 1000 && secondTtl > 1000 && secondTtl <= 2000)
            const [third, thirdTtl] = yield* take
            assert.strictEqual(third, 3)
            assert.isTrue(thirdTtl <= secondTtl && thirdTtl > 0)
            const [fourth, fourthTtl] = yield* take
            assert.strictEqual(fourth, 3)
            assert.isTrue(fourthTtl <= thirdTtl)
          })
        )

        it.effect("requests at once never pass the limit of a fixed window", () =>
          Effect.gen(function* () {
            const limiter = yield* RateLimiter.RateLimiter
            const options = { algorithm: "fixed-window", window: "30 seconds", limit: 10, key: fresh() } as const
            const answers = yield* Effect.all(
              Array.from({ length: 25 }, () => refusal(limiter.consume(options))),
              { concurrency: "unbounded" }
            )
            assert.strictEqual(count(answers), 10)
          })
        )

        it.effect("a token bucket admits its limit at once, then one request per refill interval", () =>
          Effect.gen(function* () {
            const limiter = yield* RateLimiter.RateLimiter
            const options = { algorithm: "token-bucket", window: "3 seconds", limit: 2, key: fresh() } as const
            assert.strictEqual((yield* limiter.consume(options)).remaining, 1)
            assert.strictEqual((yield* limiter.consume(options)).remaining, 0)
            const refused = yield* refusal(limiter.consume(options))
            assert.isDefined(refused)
            const wait = Duration.toMillis(refused!.retryAfter)
            assert.isTrue(wait > 0 && wait <= 1500, `waits ${wait} ms`)
            yield* Effect.sleep(Duration.millis(wait + 100))
            assert.strictEqual((yield* limiter.consume(options)).remaining, 0)
            assert.isDefined(yield* refusal(limiter.consume(options)))
          })
        )

        it.effect("requests at once never pass the limit of a token bucket", () =>
          Effect.gen(function* () {
            const limiter = yield* RateLimiter.RateLimiter
            const options = { algorithm: "token-bucket", window: "60 seconds", limit: 5, key: fresh() } as const
            const answers = yield* Effect.all(
              Array.from({ length: 20 }, () => refusal(limiter.consume(options))),
              { concurrency: "unbounded" }
            )
            assert.strictEqual(count(answers), 5)
          })
        )
      }
    ))
