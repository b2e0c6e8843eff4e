import { Deferred, Duration, Effect, Exit, type Scope } from "effect"
import * as RateLimiter from "effect/persistence/RateLimiter"

type Store = RateLimiter.RateLimiterStore["Service"]
type WindowOptions = Parameters<Store["fixedWindow"]>[0]
type Answer = readonly [count: number, ttl: number]

interface Member {
  readonly tokens: number
  readonly answer: Deferred.Deferred<Answer, RateLimiter.RateLimiterError>
  /** Interrupted before its answer: not sent to the store when it has not been yet. */
  gone: boolean
}

/** What the store last said of a key's window: the count before the next take, and the ttl. */
interface Seen {
  readonly before: number
  readonly ttl: number
}

const slow = new RateLimiter.RateLimiterError({
  reason: new RateLimiter.RateLimitStoreError({ message: "the rate-limit store did not answer in time" })
})

/**
 * The store with each key's concurrent `fixedWindow` takes sharing one call: while a call for a key is on
 * its way, the takes of that key arriving meanwhile wait and then go together, in one call carrying the sum
 * of their tokens (never more than the limit; more wait for the call after). A take that finds its key idle
 * goes at once. Keys are independent; the token bucket and the adaptive limiter pass straight through.
 *
 * The answers stay exact, each as if its take had reached the store alone:
 * - a group the store admits passes whole; each member answers its own count (the count before the group
 *   plus its place in it) and the window's ttl;
 * - a group the store refuses (it leaves the window as it was) is taken again member by member, in arrival
 *   order. Each refusal tells the count in the window; a member that cannot fit in it is refused with that
 *   count and ttl at once (a refusal changes nothing, so it is the answer the store would give), and a member
 *   that can is sent alone. Exactly as many pass as the budget holds.
 * - a failed call (or one slower than `timeout`) fails every member it carried with that error.
 *
 * A member interrupted while it waits is left out of its group; its fellows are answered as usual.
 */
export const coalesceFixedWindow = (store: Store, timeout: Duration.Input): Effect.Effect<Store, never, Scope.Scope> =>
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    /** The members waiting per lane; a lane is present while a call for it is on its way. */
    const lanes = new Map<string, Array<Member>>()

    const call = (options: WindowOptions, tokens: number) =>
      store
        .fixedWindow({ ...options, tokens })
        .pipe(Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.fail(slow) }))

    const fits = (options: WindowOptions, count: number) => options.limit === undefined || count <= options.limit

    /** A refused group, member by member: sent alone only when the last answer leaves room for it. */
    const oneByOne = (options: WindowOptions, group: ReadonlyArray<Member>, first: Seen) =>
      Effect.gen(function* () {
        let seen = first
        for (const member of group) {
          if (member.gone) continue
          if (!fits(options, seen.before + member.tokens)) {
            Deferred.doneUnsafe(member.answer, Effect.succeed([seen.before + member.tokens, seen.ttl] as const))
            continue
          }
          const exit = yield* Effect.exit(call(options, member.tokens))
          Deferred.doneUnsafe(member.answer, exit)
          if (Exit.isSuccess(exit)) {
            const [count, ttl] = exit.value
            seen = { before: fits(options, count) ? count : count - member.tokens, ttl }
          }
        }
      })

    const settle = (options: WindowOptions, group: ReadonlyArray<Member>) =>
      Effect.gen(function* () {
        const tokens = group.reduce((sum, member) => sum + member.tokens, 0)
        const exit = yield* Effect.exit(call(options, tokens))
        if (Exit.isFailure(exit)) {
          for (const member of group) Deferred.doneUnsafe(member.answer, exit)
          return
        }
        const [count, ttl] = exit.value
        if (fits(options, count) || group.length === 1) {
          let place = count - tokens
          for (const member of group) {
            place += member.tokens
            Deferred.doneUnsafe(member.answer, Effect.succeed([place, ttl] as const))
          }
          return
        }
        yield* oneByOne(options, group, { before: count - tokens, ttl })
      })

    /** The lane's groups one after another while members wait; the lane is freed when none do. */
    const drain = (lane: string, options: WindowOptions) => {
      let group: ReadonlyArray<Member> = []
      return Effect.gen(function* () {
        while (true) {
          const waiting = (lanes.get(lane) ?? []).filter((member) => !member.gone)
          if (waiting.length === 0) {
            lanes.delete(lane)
            return
          }
          let tokens = waiting[0]!.tokens
          let size = 1
          while (size < waiting.length && fits(options, tokens + waiting[size]!.tokens))
            tokens += waiting[size++]!.tokens
          group = waiting.slice(0, size)
          lanes.set(lane, waiting.slice(size))
          yield* settle(options, group)
        }
      }).pipe(
        Effect.onInterrupt(() =>
          Effect.sync(() => {
            for (const member of [...group, ...(lanes.get(lane) ?? [])])
              Deferred.doneUnsafe(member.answer, Effect.interrupt)
            lanes.delete(lane)
          })
        )
      )
    }

    const enqueue = (lane: string, options: WindowOptions, member: Member) =>
      Effect.uninterruptible(
        Effect.suspend(() => {
          const waiting = lanes.get(lane)
          if (waiting !== undefined) {
            waiting.push(member)
            return Effect.void
          }
          lanes.set(lane, [member])
          return Effect.asVoid(Effect.forkIn(Effect.interruptible(drain(lane, options)), scope))
        })
      )

    return RateLimiter.RateLimiterStore.of({
      ...store,
      fixedWindow: (options) =>
        Effect.suspend(() => {
          // Takes of one key go together only when they count alike (same limit, same refill).
          const lane = `${options.limit ?? "-"}:${Duration.toMillis(options.refillRate)}:${options.key}`
          const member: Member = { tokens: options.tokens, answer: Deferred.makeUnsafe(), gone: false }
          return Effect.andThen(
            enqueue(lane, options, member),
            Deferred.await(member.answer).pipe(
              Effect.onInterrupt(() =>
                Effect.sync(() => {
                  member.gone = true
                })
              )
            )
          )
        })
    })
  })
