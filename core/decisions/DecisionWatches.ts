import { Clock, Deferred, Effect, Exit, Scope } from "effect"

/** What the watches need: the wake-ups of a decision, and one read of it as its waiters see it. */
export interface DecisionWatchesOptions<A, E> {
  /** Listens from now on; the effect completes at the next signal (core/decisions/DecisionSignals.ts). */
  readonly subscribe: (decisionId: string) => Effect.Effect<Effect.Effect<void>, never, Scope.Scope>
  /** One read of the decision for one organization; a missing decision and another org's fail alike. */
  readonly read: (organizationId: string, decisionId: string) => Effect.Effect<A, E>
  readonly statusOf: (read: A) => string
  /** When the decision as read changes by time alone (an open decision's expiry), in epoch milliseconds. */
  readonly changesAt: (read: A) => number | undefined
}

export interface DecisionWatches<A, E> {
  /**
   * Waits on one decision: answers the first read whose status differs from the waiter's first read, or,
   * once the wait ends (at `deadline`, in epoch milliseconds, or when `endEarly` completes), the decision
   * as it is then. Fails as a read fails (the first read's NotFound, for instance).
   */
  readonly wait: (
    organizationId: string,
    decisionId: string,
    deadline: number,
    endEarly: Effect.Effect<void>
  ) => Effect.Effect<A, E>
  /** How many waiters hold on for a change of one organization's decision (first read done, wait not over). */
  readonly waiting: (organizationId: string, decisionId: string) => number
}

/**
 * How long a read of a watched decision stands for its current state when no wake-up has come since it
 * began. Wake-ups follow every committed change, so such a read IS current; the bound only limits how
 * long a notification lost between instances can go unseen by a new wait or one that ends.
 */
const currentForMillis = 1_000

interface Waiter<A, E> {
  readonly deadline: number
  readonly endEarly: Effect.Effect<void>
  /** The status of its first read; undefined until then. */
  from: string | undefined
  /** Resumes the waiting request with its answer, once it waits (see `answer`). */
  resume: ((exit: Exit.Exit<A, E>) => void) | undefined
  /** The answer given before the request began to wait for it. */
  exit: Exit.Exit<A, E> | undefined
  /** Its own `endEarly` (not the watch's) has completed: its wait is over. */
  endedEarly: boolean
}

interface Watch<A, E> {
  /** Waiters that need a current read: their first one, or the last one of a wait that is over. */
  readonly needy: Set<Waiter<A, E>>
  /** Waiters with their first read, holding on for a change of its status. */
  readonly holding: Set<Waiter<A, E>>
  /** Rung by anything the watch should look at: a waiter joining or leaving, a wake-up, the drain. */
  bell: Deferred.Deferred<void>
  /** The last successful read and when it began. */
  latest: { readonly value: A; readonly at: number } | undefined
  /** A wake-up came (or expiry passed) since the last read began: that read may be out of date. */
  changed: boolean
  changesAt: number | undefined
  /** No holding waiter's deadline is earlier. */
  nextDeadline: number
  /** The `endEarly` of the waiter that made the watch; the watch ends the waits of all who share it. */
  readonly endEarly: Effect.Effect<void>
  ending: boolean
}

/**
 * Long-poll waiters share one watch per decision (per organization): one fiber that holds the decision's
 * one subscription to wake-ups and, on each wake-up, reads the decision ONCE and hands that read to every
 * waiter whose starting status it no longer matches; the others hold on. A change costs one read however
 * many wait on it, and a waiter costs a few small objects, not a fiber, a subscription and reads of its own.
 *
 * The watch subscribes before every read, so a change committed after a read began always wakes it again.
 * While no wake-up has come since a read began, that read is the decision's current state: it is the first
 * read of waiters who join then, and the answer of waiters whose wait ends then (at its deadline, or when
 * `endEarly` completes: the server draining), so a crowd arriving or leaving together costs about one read
 * per decision too. The watch wakes itself at an open decision's expiry (which needs no signal) and at the
 * earliest deadline of its waiters.
 *
 * The watch fibers run in the scope and with the services of the layer that made the watches, never in a
 * waiter's request (nor in its transaction); the last waiter to leave stops its watch.
 */
export const makeDecisionWatches = <A, E>(
  options: DecisionWatchesOptions<A, E>
): Effect.Effect<DecisionWatches<A, E>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    const context = yield* Effect.context<never>()
    const watches = new Map<string, Watch<A, E>>()
    const keyOf = (organizationId: string, decisionId: string) => JSON.stringify([organizationId, decisionId])

    const ring = (watch: Watch<A, E>) => Deferred.doneUnsafe(watch.bell, Exit.void)

    const isCurrent = (watch: Watch<A, E>, now: number) =>
      watch.latest !== undefined &&
      !watch.changed &&
      now - watch.latest.at < currentForMillis &&
      (watch.changesAt === undefined || now < watch.changesAt)

    /** A waiter's wait is over: the next current read answers it. */
    const release = (watch: Watch<A, E>, waiter: Waiter<A, E>) => {
      if (watch.holding.delete(waiter)) watch.needy.add(waiter)
    }

    const isOver = (watch: Watch<A, E>, waiter: Waiter<A, E>, now: number) =>
      waiter.deadline <= now || waiter.endedEarly || (watch.ending && waiter.endEarly === watch.endEarly)

    /**
     * Ends a wait with `exit`. The waiting request goes on at once, in this very call (writing its answer,
     * for a request of the HTTP API), so a waiter leaves its watch's sets before it is answered.
     */
    const answer = (waiter: Waiter<A, E>, exit: Exit.Exit<A, E>) => {
      if (waiter.resume === undefined) waiter.exit = exit
      else waiter.resume(exit)
    }

    /** Answers the needy waiters with a current read: a first read (held on from), or a last one. */
    const serve = (watch: Watch<A, E>, exit: Exit.Exit<A, E>, now: number) => {
      const status = Exit.isSuccess(exit) ? options.statusOf(exit.value) : undefined
      for (const waiter of watch.needy) {
        watch.needy.delete(waiter)
        if (waiter.from === undefined && status !== undefined) {
          waiter.from = status
          if (!isOver(watch, waiter, now)) {
            watch.holding.add(waiter)
            watch.nextDeadline = Math.min(watch.nextDeadline, waiter.deadline)
            continue
          }
        }
        // A failed first read, or a current read for a wait that is over.
        answer(waiter, exit)
      }
    }

    /** Hands a new read to the holding waiters whose status it changes (or whom it fails), then serves. */
    const hand = (watch: Watch<A, E>, exit: Exit.Exit<A, E>, now: number) => {
      const status = Exit.isSuccess(exit) ? options.statusOf(exit.value) : undefined
      for (const waiter of watch.holding) {
        if (status === undefined || status !== waiter.from) {
          watch.holding.delete(waiter)
          answer(waiter, exit)
        }
      }
      serve(watch, exit, now)
    }

    /** Ends the waits that are over: deadlines passed, and the drain. */
    const endWaits = (watch: Watch<A, E>, now: number) => {
      if (now < watch.nextDeadline && !watch.ending) return
      let next = Number.POSITIVE_INFINITY
      for (const waiter of watch.holding) {
        if (isOver(watch, waiter, now)) release(watch, waiter)
        else next = Math.min(next, waiter.deadline)
      }
      watch.nextDeadline = next
    }

    const run = (key: string, organizationId: string, decisionId: string, watch: Watch<A, E>) => {
      let listening: Scope.Closeable | undefined
      /** Whether the watch is done, leaving at once (no effect in between) so that no waiter joins it after. */
      const done = () => {
        if (watch.needy.size > 0 || watch.holding.size > 0) return false
        watches.delete(key)
        return true
      }
      // Listens for the decision's next wake-up, before a read: one committed during the read is not missed.
      const listen = Effect.gen(function* () {
        const held = yield* Scope.make()
        const next = yield* Scope.provide(options.subscribe(decisionId), held)
        yield* Effect.forkIn(
          Effect.andThen(
            next,
            Effect.sync(() => {
              watch.changed = true
              ring(watch)
            })
          ),
          held
        )
        if (listening !== undefined) yield* Scope.close(listening, Exit.void)
        listening = held
      })
      return Effect.gen(function* () {
        if (watch.endEarly !== Effect.never) {
          yield* Effect.forkChild(
            Effect.andThen(
              watch.endEarly,
              Effect.sync(() => {
                watch.ending = true
                ring(watch)
              })
            )
          )
        }
        while (true) {
          watch.bell = Deferred.makeUnsafe<void>()
          const now = yield* Clock.currentTimeMillis
          if (watch.changesAt !== undefined && now >= watch.changesAt) watch.changed = true
          endWaits(watch, now)
          if (watch.needy.size > 0 && isCurrent(watch, now)) serve(watch, Exit.succeed(watch.latest!.value), now)
          if (done()) return
          if (watch.changed || watch.needy.size > 0) {
            yield* listen
            watch.changed = false
            const exit = yield* Effect.exit(options.read(organizationId, decisionId))
            watch.latest = Exit.isSuccess(exit) ? { value: exit.value, at: now } : undefined
            watch.changesAt = Exit.isSuccess(exit) ? options.changesAt(exit.value) : undefined
            hand(watch, exit, yield* Clock.currentTimeMillis)
            if (done()) return
            continue
          }
          const wakeAt = Math.min(watch.changesAt ?? Number.POSITIVE_INFINITY, watch.nextDeadline)
          yield* Deferred.await(watch.bell).pipe(
            Number.isFinite(wakeAt)
              ? Effect.timeoutOrElse({ duration: Math.max(0, wakeAt - now), orElse: () => Effect.void })
              : (wait) => wait
          )
        }
      }).pipe(
        Effect.onExit(() =>
          Effect.suspend(() => {
            if (watches.get(key) === watch) watches.delete(key)
            // Waiters left behind (the layer closing) must not wait on a watch that is gone.
            const left = [...watch.needy, ...watch.holding]
            watch.needy.clear()
            watch.holding.clear()
            for (const waiter of left) answer(waiter, Exit.interrupt())
            return listening === undefined ? Effect.void : Scope.close(listening, Exit.void)
          })
        )
      )
    }

    const join = (organizationId: string, decisionId: string, deadline: number, endEarly: Effect.Effect<void>) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const key = keyOf(organizationId, decisionId)
        const existing = watches.get(key)
        const watch: Watch<A, E> = existing ?? {
          needy: new Set(),
          holding: new Set(),
          bell: Deferred.makeUnsafe(),
          latest: undefined,
          changed: false,
          changesAt: undefined,
          nextDeadline: Number.POSITIVE_INFINITY,
          endEarly,
          ending: false
        }
        const waiter: Waiter<A, E> = {
          deadline,
          endEarly,
          from: undefined,
          resume: undefined,
          exit: undefined,
          endedEarly: false
        }
        watch.needy.add(waiter)
        if (isCurrent(watch, now)) serve(watch, Exit.succeed(watch.latest!.value), now)
        else ring(watch)
        if (existing !== undefined) return Effect.succeed({ watch, waiter })
        watches.set(key, watch)
        return Effect.as(
          Effect.forkIn(Effect.provideContext(run(key, organizationId, decisionId, watch), context), scope),
          { watch, waiter }
        )
      })

    const leave = ({ watch, waiter }: { readonly watch: Watch<A, E>; readonly waiter: Waiter<A, E> }) =>
      Effect.sync(() => {
        if (watch.needy.delete(waiter) || watch.holding.delete(waiter)) ring(watch)
      })

    /**
     * The answer of a waiter that has joined its watch: given at once when the watch answered it already, else
     * when the watch does. One callback per waiting request, nothing more: thousands wait at once.
     */
    const answered = (waiter: Waiter<A, E>) =>
      Effect.callback<A, E>((resume) => {
        if (waiter.exit !== undefined) resume(waiter.exit)
        else waiter.resume = resume
      })

    return {
      wait: (organizationId, decisionId, deadline, endEarly) =>
        Effect.acquireUseRelease(
          join(organizationId, decisionId, deadline, endEarly),
          ({ watch, waiter }) =>
            // Waits that end early with the watch's own `endEarly` are ended by the watch, all at once.
            endEarly === watch.endEarly || endEarly === Effect.never
              ? answered(waiter)
              : Effect.raceFirst(
                  answered(waiter),
                  Effect.andThen(
                    endEarly,
                    Effect.suspend(() => {
                      // Over: answered by the next current read (its first one, if it has none yet).
                      waiter.endedEarly = true
                      release(watch, waiter)
                      ring(watch)
                      return Effect.never
                    })
                  )
                ),
          leave
        ),
      waiting: (organizationId, decisionId) => watches.get(keyOf(organizationId, decisionId))?.holding.size ?? 0
    }
  })
