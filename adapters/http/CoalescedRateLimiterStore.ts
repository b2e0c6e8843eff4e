import { Clock, Deferred, Duration, Effect, Exit, type Scope } from "effect"
import * as RateLimiter from "effect/persistence/RateLimiter"

type Store = RateLimiter.RateLimiterStore["Service"]
type WindowOptions = Parameters<Store["fixedWindow"]>[0]
type Answer = readonly [count: number, ttl: number]

interface Member {
  readonly tokens: number
  /** When its take has waited long enough (its arrival plus the timeout): answered by then, failed if need be. */
  readonly deadline: number
  readonly answer: Deferred.Deferred<Answer, RateLimiter.RateLimiterError>
  /** Interrupted before its answer: not sent to the store when it has not been yet. */
  gone: boolean
}

/** What the store last said of a key's window: the count before the next take, and the ttl. */
interface Seen {
  readonly before: number
  readonly ttl: number
}

/** A lane's lease: what the store last answered for its window, and the tokens counted there ahead of takes. */
interface Lease {
  /** The window's count in the store's last answer for this lane (the surplus included). */
  readonly top: number
  /** Tokens the store counted for this lane and no take has received yet. */
  surplus: number
  /** When that window ends at the earliest, on this process's clock: the time before the call plus its ttl. */
  readonly expiresAt: number
}

/**
 * The most tokens a call asks for one take (the server's `maxLease`): a busy client then reaches the store
 * once in 16 requests, where the call is no longer a visible share of a request's time, while what one
 * instance can hold back of a client's window stays at 15 requests, and a lease moves the window's end on by
 * 16 refills (1.6 s of a budget of 600 a minute).
 */
export const leaseTokens = 16

/** A lease is an eighth of what the window has left at most: near the limit, every take goes to the store. */
const leaseShare = 8

/**
 * Under a high limit a lease may hold up to a thousandth of it (more than `maxLease`): a lease then lasts about
 * a thousandth of the window (60 ms of a minute) whatever the limit, where 16 tokens of a limit of a million a
 * minute would last 1 ms and every take would go to the store.
 */
export const leaseOfLimit = 1000

/** The leases are swept when they have doubled since the last sweep, and never below this many. */
const sweepFloor = 1024

const slow = new RateLimiter.RateLimiterError({
  reason: new RateLimiter.RateLimitStoreError({ message: "the rate-limit store did not answer in time" })
})

/**
 * The store with each key's concurrent `fixedWindow` takes sharing one call: while a call for a key is on
 * its way, the takes of that key arriving meanwhile wait and then go together, in one call carrying the sum
 * of their tokens (never more than the limit; more wait for the call after). A take that finds its key idle
 * goes at once. Keys are independent.
 *
 * With `maxLease` above 1, a call may also take tokens ahead (a lease): the surplus is kept here for the key
 * and the key's next takes are answered from it without a call, until it is spent or its window ends.
 * - Never more than the limit: the store counts a lease as taken, so all the instances on the store together
 *   admit no more than the limit in a window. A leased token is used only before the window it was counted
 *   in ends: the lease ends at the time read just before its call was sent plus the ttl answered, so a slow
 *   answer or a late clock here makes it end early, never late.
 * - Exact near the limit: a call asks for its takes' tokens plus `min(cap - 1, floor(left / 8))`, where `cap`
 *   is the larger of `maxLease` and a thousandth of the limit, and `left` is what the store's last answer
 *   left in the window once those takes are counted (the whole limit once that window has ended; nothing
 *   extra while no answer is known). Once 8 or fewer are left, a call asks for its takes' tokens only: every
 *   take reaches the store, as without leases. Instances leasing one after another an eighth of what remains
 *   hold together less than what remained.
 * - The price is a bound on refusals, never on admissions: a request is refused only when the store's window
 *   is full, and what the window then holds beyond the requests admitted is leased tokens not yet spent, at
 *   most `cap - 1` per instance (and an eighth of what was left when each was leased). The refusing
 *   instance holds none, but for a lease given up early (the latency of its call) at the window's end. So
 *   over `n` instances at least `limit - (n - 1) * (cap - 1)` requests pass in a window, and exactly
 *   `limit` when each instance keeps receiving the client's requests until its lease is spent; on one
 *   instance every request the window holds passes.
 * - Each token the store counts moves the window's end on by its refill (window / limit), so a lease of k
 *   tokens moves it by k refills when it is taken rather than as its tokens are spent: the window is the one
 *   the same takes would open had they come together, and the lease lasts until that end.
 * - A call whose lease does not fit (the store refuses it, changing nothing) is sent again with exactly its
 *   takes' tokens, so a take that fits alone is never refused for a lease; a take refused answers the
 *   store's count and ttl, as without leases.
 * - An answer from a lease is the one the store gave that token in the lease's call (its count there), with
 *   the time left until the lease ends (at least 1 ms).
 * - A take needing more tokens than its lane's lease holds goes to the store, and what that call answers
 *   replaces the lease: what was left of it stays counted, unspent (only takes of several tokens leave any).
 * - A lane's lease is kept after its window ends (it tells that the next call may lease at once); the ended
 *   ones go in a sweep whenever the leases have doubled since the last (and number over 1024), so distinct
 *   clients cannot grow them past twice the lanes with an open window.
 *
 * The answers of a call stay exact, each as if its take had reached the store alone:
 * - a group the store admits passes whole; each member answers its own count (the count before the group
 *   plus its place in it) and the window's ttl;
 * - a group the store refuses (it leaves the window as it was) is taken again member by member, in arrival
 *   order. Each refusal tells the count in the window; a member that cannot fit in it is refused with that
 *   count and ttl at once (a refusal changes nothing, so it is the answer the store would give), and a member
 *   that can is sent alone. Exactly as many pass as the budget holds.
 * - a failed call fails every member it carried with that error.
 *
 * No take waits longer than `timeout` for the store: each has a deadline (its arrival plus `timeout`), a call
 * carries its members' earliest, and one that would end past it fails them all as slow (a take that waited
 * behind a slow call meets its deadline in its own call, or at once when it has passed). One timer per call,
 * none per take: a take answered from a lease waits for nothing. The token bucket has the same bound; the
 * adaptive limiter passes straight through.
 *
 * A member interrupted while it waits is left out of its group; its fellows are answered as usual.
 */
export const coalesceFixedWindow = (
  store: Store,
  timeout: Duration.Input,
  maxLease = 1
): Effect.Effect<Store, never, Scope.Scope> =>
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    /** The members waiting per lane; a lane is present while a call for it is on its way. */
    const lanes = new Map<string, Array<Member>>()
    const leases = new Map<string, Lease>()
    let keptAfterSweep = 0

    const timeoutMillis = Duration.toMillis(Duration.fromInputUnsafe(timeout))

    /** A store call on behalf of takes that must be answered by `deadline`: slower, it fails for all of them. */
    const call = (options: WindowOptions, tokens: number, deadline: number) =>
      Effect.clockWith((clock) => {
        const left = deadline - clock.currentTimeMillisUnsafe()
        if (left <= 0) return Effect.fail(slow)
        return store
          .fixedWindow({ ...options, tokens })
          .pipe(Effect.timeoutOrElse({ duration: Duration.millis(left), orElse: () => Effect.fail(slow) }))
      })

    const earliest = (group: ReadonlyArray<Member>) =>
      group.reduce((deadline, member) => Math.min(deadline, member.deadline), Infinity)

    const fits = (options: WindowOptions, count: number) => options.limit === undefined || count <= options.limit

    // An ended lease is kept (until a sweep) for what it tells of the lane: that its window has ended.
    const leaseOf = (lane: string, now: number) => {
      const lease = leases.get(lane)
      return lease === undefined || lease.expiresAt > now ? lease : undefined
    }

    const remember = (lane: string, sentAt: number, top: number, surplus: number, ttl: number) => {
      if (maxLease <= 1) return
      leases.set(lane, { top, surplus, expiresAt: sentAt + ttl })
      if (leases.size <= Math.max(sweepFloor, 2 * keptAfterSweep)) return
      for (const [key, lease] of leases) if (lease.expiresAt <= sentAt) leases.delete(key)
      keptAfterSweep = leases.size
    }

    /** The lease's next tokens for a take: the count they had in the lease's call, and the time left. */
    const fromLease = (lease: Lease, tokens: number, now: number): Answer => {
      lease.surplus -= tokens
      return [lease.top - lease.surplus, Math.max(1, lease.expiresAt - now)]
    }

    const spendable = (lease: Lease | undefined, tokens: number): lease is Lease =>
      lease !== undefined && tokens > 0 && tokens <= lease.surplus

    /**
     * The tokens to take ahead with a call carrying `tokens`: none until the store has told what is left. Once
     * the window of the last answer has ended, the next one is taken to be empty: if another instance has
     * filled it meanwhile, the store refuses the lease and the takes go again alone.
     */
    const extraFor = (lane: string, options: WindowOptions, tokens: number, now: number) => {
      const lease = leases.get(lane)
      if (maxLease <= 1 || options.limit === undefined || lease === undefined) return 0
      const left = options.limit - (lease.expiresAt > now ? lease.top : 0) - tokens
      const most = Math.max(maxLease, Math.floor(options.limit / leaseOfLimit)) - 1
      return Math.max(0, Math.min(most, Math.floor(left / leaseShare)))
    }

    /** A refused group, member by member: sent alone only when the last answer leaves room for it. */
    const oneByOne = (lane: string, options: WindowOptions, group: ReadonlyArray<Member>, first: Seen) =>
      Effect.gen(function* () {
        let seen = first
        for (const member of group) {
          if (member.gone) continue
          if (!fits(options, seen.before + member.tokens)) {
            Deferred.doneUnsafe(member.answer, Effect.succeed([seen.before + member.tokens, seen.ttl] as const))
            continue
          }
          const sentAt = yield* Clock.currentTimeMillis
          const exit = yield* Effect.exit(call(options, member.tokens, member.deadline))
          if (Exit.isSuccess(exit)) {
            const [count, ttl] = exit.value
            seen = { before: fits(options, count) ? count : count - member.tokens, ttl }
            remember(lane, sentAt, seen.before, 0, ttl)
          }
          Deferred.doneUnsafe(member.answer, exit)
        }
      })

    const settle = (
      lane: string,
      options: WindowOptions,
      group: ReadonlyArray<Member>,
      extra: number
    ): Effect.Effect<void> =>
      Effect.gen(function* () {
        const tokens = group.reduce((sum, member) => sum + member.tokens, 0)
        const sentAt = yield* Clock.currentTimeMillis
        const exit = yield* Effect.exit(call(options, tokens + extra, earliest(group)))
        if (Exit.isFailure(exit)) {
          for (const member of group) Deferred.doneUnsafe(member.answer, exit)
          return
        }
        const [count, ttl] = exit.value
        const before = count - tokens - extra
        if (fits(options, count)) {
          remember(lane, sentAt, count, extra, ttl)
          let place = before
          for (const member of group) {
            place += member.tokens
            Deferred.doneUnsafe(member.answer, Effect.succeed([place, ttl] as const))
          }
          return
        }
        remember(lane, sentAt, before, 0, ttl)
        if (extra > 0 && fits(options, before + tokens)) {
          // Only the lease did not fit: the takes go again with their own tokens.
          const present = group.filter((member) => !member.gone)
          return present.length === 0 ? undefined : yield* settle(lane, options, present, 0)
        }
        if (group.length === 1) {
          Deferred.doneUnsafe(group[0]!.answer, Effect.succeed([before + tokens, ttl] as const))
          return
        }
        yield* oneByOne(lane, options, group, { before, ttl })
      })

    /** The lane's groups one after another while members wait; the lane is freed when none do. */
    const drain = (lane: string, options: WindowOptions) => {
      let group: ReadonlyArray<Member> = []
      return Effect.gen(function* () {
        while (true) {
          const now = yield* Clock.currentTimeMillis
          const waiting = (lanes.get(lane) ?? []).filter((member) => !member.gone)
          // The lease the last call brought answers the takes that arrived while it was on its way. A member
          // answered may run at once and take again: the lane is made ready for that first.
          const lease = leaseOf(lane, now)
          const fromTheLease: Array<readonly [Member, Answer]> = []
          while (waiting.length > 0 && spendable(lease, waiting[0]!.tokens)) {
            const member = waiting.shift()!
            fromTheLease.push([member, fromLease(lease!, member.tokens, now)])
          }
          let tokens = 0
          let size = 0
          while (size < waiting.length && (size === 0 || fits(options, tokens + waiting[size]!.tokens)))
            tokens += waiting[size++]!.tokens
          group = waiting.slice(0, size)
          if (size === 0) lanes.delete(lane)
          else lanes.set(lane, waiting.slice(size))
          for (const [member, answer] of fromTheLease) Deferred.doneUnsafe(member.answer, Effect.succeed(answer))
          if (size === 0) return
          yield* settle(lane, options, group, extraFor(lane, options, tokens, now))
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
      tokenBucket: (options) =>
        store.tokenBucket(options).pipe(Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.fail(slow) })),
      fixedWindow: (options) =>
        Effect.clockWith((clock) => {
          // Takes of one key go together only when they count alike (same limit, same refill).
          const lane = `${options.limit ?? "-"}:${Duration.toMillis(options.refillRate)}:${options.key}`
          const now = clock.currentTimeMillisUnsafe()
          const lease = leaseOf(lane, now)
          if (spendable(lease, options.tokens)) return Effect.succeed(fromLease(lease, options.tokens, now))
          const member: Member = {
            tokens: options.tokens,
            deadline: now + timeoutMillis,
            answer: Deferred.makeUnsafe(),
            gone: false
          }
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
