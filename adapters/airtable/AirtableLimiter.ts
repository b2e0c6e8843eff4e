import { Context, Data, Duration, Effect, Layer } from "effect"
import * as RateLimiter from "effect/persistence/RateLimiter"

export interface AirtableLimiterOptions {
  /**
   * The least time between two requests to one base, whichever instance sends them. Default 250 ms: at most
   * 5 requests in any second (Airtable's limit per base), with room for the network to bunch them a little.
   */
  readonly spacingMillis?: number | undefined
  /** After a 429, no request to that base for this long (or the answer's `Retry-After`, if longer). Default 30 s. */
  readonly pauseMillis?: number | undefined
  /** A request whose turn is further away than this is not queued: it fails at once with AirtableBusy. Default 10 s. */
  readonly maxWaitMillis?: number | undefined
}

/** The base's turn is too far away (a queue, or a pause after a 429): the request was not sent. */
export class AirtableBusy extends Data.TaggedError("AirtableBusy")<{ readonly retryAfterMillis: number }> {}

/**
 * The one limiter of the requests to each Airtable base, for every caller (the task inbox's record store,
 * decisions' record updates) and, through the shared rate-limit store, every instance.
 */
export class AirtableLimiter extends Context.Service<
  AirtableLimiter,
  {
    /** Waits for the base's next turn (sending nothing while the base is paused); then the caller sends one request. */
    readonly turn: (baseId: string) => Effect.Effect<void, AirtableBusy>
    /** No request to the base for `millis` from now (a pause already longer is kept). */
    readonly pause: (baseId: string, millis: number) => Effect.Effect<void>
    /** How long a 429 pauses its base, given the answer's Retry-After (in milliseconds), if any. */
    readonly pauseAfter429: (retryAfterMillis: number | undefined) => number
  }
>()("adapters/airtable/AirtableLimiter") {}

const scheduleKey = (baseId: string) => `airtable:${baseId}:turns`
const pauseKey = (baseId: string) => `airtable:${baseId}:pause`
const sentKey = (baseId: string) => `airtable:${baseId}:sent`

/**
 * The limiter over effect's `RateLimiterStore` (memory, Postgres or Redis: the server's store of rate budgets).
 *
 * Turns: each request takes the base's next turn from one counter of the store, whose end moves by the spacing
 * with every turn taken (the store's fixed window without a limit), so turns are at least the spacing apart
 * across instances; a request waits until its turn starts. A request finding the queue longer than
 * `maxWaitMillis` takes no turn and fails at once, so a burst refused does not push back the requests after it.
 *
 * Sends: a turn's start is when its request was due, not when it goes: a fiber woken late on a busy machine would
 * send together with the one whose turn follows. So a request, its turn come, also takes the base's send window
 * (a window of the store that holds one request for the spacing): if another request was sent less than the
 * spacing ago, it waits for the window's end and tries again. Requests are then the spacing apart by the time
 * they are sent, whichever instance sends them.
 *
 * Pauses: a 429 sets the base's pause key to expire after the pause; every request reads it before taking a
 * turn and again when its turn comes, and sends nothing while it holds.
 *
 * When the store cannot answer, this instance keeps the base's turns and pauses in its own memory until it
 * answers again (each instance then keeps the limit alone); the first failure is logged.
 */
export const makeAirtableLimiter = (options: AirtableLimiterOptions = {}) =>
  Effect.gen(function* () {
    const shared = yield* RateLimiter.RateLimiterStore
    const local = yield* RateLimiter.RateLimiterStore.pipe(Effect.provide(RateLimiter.layerStoreMemory))
    const spacing = Math.max(1, options.spacingMillis ?? 250)
    const pauseMillis = options.pauseMillis ?? 30_000
    const maxWait = options.maxWaitMillis ?? 10_000
    let degraded = false

    type Window = Parameters<RateLimiter.RateLimiterStore["Service"]["fixedWindow"]>[0]
    const fixedWindow = (window: Window) =>
      shared.fixedWindow(window).pipe(
        Effect.timeoutOrElse({
          duration: Duration.seconds(1),
          orElse: () =>
            Effect.fail(
              new RateLimiter.RateLimiterError({
                reason: new RateLimiter.RateLimitStoreError({ message: "the store did not answer within a second" })
              })
            )
        }),
        Effect.tap(() => {
          if (!degraded) return Effect.void
          degraded = false
          return Effect.logInfo("the rate-limit store answers again; Airtable turns are shared again")
        }),
        Effect.catch((error) =>
          Effect.gen(function* () {
            if (!degraded) {
              degraded = true
              yield* Effect.logWarning("the rate-limit store failed; Airtable turns are kept per instance", error)
            }
            return yield* Effect.orDie(local.fixedWindow(window))
          })
        )
      )

    /** Milliseconds left of the base's pause (0: none). Reading takes nothing: zero tokens. */
    const pausedFor = (baseId: string) =>
      Effect.map(
        fixedWindow({ key: pauseKey(baseId), tokens: 0, refillRate: Duration.millis(1), limit: undefined }),
        ([count, ttl]) => (count > 0 ? Math.max(0, ttl) : 0)
      )

    /** Milliseconds until the next turn free (0: now). */
    const queuedFor = (baseId: string) =>
      Effect.map(
        fixedWindow({ key: scheduleKey(baseId), tokens: 0, refillRate: Duration.millis(1), limit: undefined }),
        ([count, ttl]) => (count > 0 ? Math.max(0, ttl) : 0)
      )

    /** Takes the base's send window once the last request sent is the spacing behind. */
    const sendWindow = (baseId: string): Effect.Effect<void> =>
      Effect.gen(function* () {
        for (;;) {
          const [count, ttl] = yield* fixedWindow({
            key: sentKey(baseId),
            tokens: 1,
            refillRate: Duration.millis(spacing),
            limit: 1
          })
          if (count <= 1) return
          yield* Effect.sleep(Math.max(1, ttl))
        }
      })

    const waitOut = (millis: number) =>
      millis > maxWait ? Effect.fail(new AirtableBusy({ retryAfterMillis: millis })) : Effect.sleep(millis)

    const turn = (baseId: string): Effect.Effect<void, AirtableBusy> =>
      Effect.gen(function* () {
        for (;;) {
          const paused = yield* pausedFor(baseId)
          if (paused > 0) {
            yield* waitOut(paused)
            continue
          }
          const queued = yield* queuedFor(baseId)
          if (queued > maxWait) return yield* new AirtableBusy({ retryAfterMillis: queued })
          const [, ttl] = yield* fixedWindow({
            key: scheduleKey(baseId),
            tokens: 1,
            refillRate: Duration.millis(spacing),
            limit: undefined
          })
          // The counter ends one spacing after the turn just taken starts.
          const delay = ttl - spacing
          if (delay > 0) yield* Effect.sleep(delay)
          // A 429 may have come while this request waited: then its turn is given up and it waits out the pause.
          const pausedSince = yield* pausedFor(baseId)
          if (pausedSince > 0) {
            yield* waitOut(pausedSince)
            continue
          }
          yield* sendWindow(baseId)
          return
        }
      })

    const pause = (baseId: string, millis: number) =>
      Effect.gen(function* () {
        const left = yield* pausedFor(baseId)
        if (left >= millis) return
        yield* fixedWindow({
          key: pauseKey(baseId),
          tokens: 1,
          refillRate: Duration.millis(millis - left),
          limit: undefined
        })
      })

    return AirtableLimiter.of({
      turn,
      pause,
      pauseAfter429: (retryAfterMillis) => Math.max(pauseMillis, retryAfterMillis ?? 0)
    })
  })

/** The limiter over the `RateLimiterStore` provided. */
export const AirtableLimiterFromStore = (
  options: AirtableLimiterOptions = {}
): Layer.Layer<AirtableLimiter, never, RateLimiter.RateLimiterStore> =>
  Layer.effect(AirtableLimiter, makeAirtableLimiter(options))
