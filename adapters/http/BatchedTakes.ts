import { Deferred, Effect, Exit, type Scope } from "effect"
import type { RateLimited, Unavailable } from "../../core/kernel/Errors.ts"
import { RateLimits, type RateBudget } from "../../core/kernel/RateLimit.ts"

type Take = (client: string) => Effect.Effect<void, RateLimited | Unavailable>

/**
 * Takes from `budget` with the requests of one client that arrive together counted in one step: while a
 * take for a client is on its way to the store, that client's next requests wait and are then taken at once
 * (`RateLimits.take` with their number), so a busy client costs the shared store one statement per round
 * trip, not one per request, and one client's requests never queue on its row one by one.
 *
 * The count is exact: a group is taken all or none; a group refused (it would pass the limit) is taken
 * again one request at a time, in arrival order, so the requests that still fit pass and the rest are
 * refused with their own wait. A store failure answers every request of the group as the budget says.
 */
export const makeBatchedTakes = (budget: RateBudget): Effect.Effect<Take, never, RateLimits | Scope.Scope> =>
  Effect.gen(function* () {
    const limits = yield* RateLimits
    const scope = yield* Effect.scope
    const waiting = new Map<string, Array<Deferred.Deferred<void, RateLimited | Unavailable>>>()
    const busy = new Set<string>()

    const settle = (client: string, group: ReadonlyArray<Deferred.Deferred<void, RateLimited | Unavailable>>) =>
      Effect.gen(function* () {
        const together = Effect.as(limits.take(budget, client, group.length), "taken" as const)
        const outcome = yield* Effect.exit(
          group.length === 1
            ? together
            : Effect.catchTag(together, "RateLimited", () => Effect.succeed("one at a time" as const))
        )
        if (Exit.isSuccess(outcome) && outcome.value === "one at a time") {
          for (const answer of group) yield* Deferred.done(answer, yield* Effect.exit(limits.take(budget, client)))
          return
        }
        const exit = Exit.asVoid(outcome)
        for (const answer of group) Deferred.doneUnsafe(answer, exit)
      }).pipe(Effect.onInterrupt(() => Effect.forEach(group, Deferred.interrupt, { discard: true })))

    /** The client's groups one after another while requests wait; frees the client when none do. */
    const drain = (client: string): Effect.Effect<void> =>
      Effect.suspend(() => {
        const group = waiting.get(client)
        if (group === undefined) {
          busy.delete(client)
          return Effect.void
        }
        waiting.delete(client)
        return Effect.andThen(settle(client, group), drain(client))
      })

    const enqueue = (client: string, answer: Deferred.Deferred<void, RateLimited | Unavailable>) =>
      Effect.uninterruptible(
        Effect.suspend(() => {
          const group = waiting.get(client)
          if (group === undefined) waiting.set(client, [answer])
          else group.push(answer)
          if (busy.has(client)) return Effect.void
          busy.add(client)
          return Effect.asVoid(Effect.forkIn(Effect.interruptible(drain(client)), scope))
        })
      )

    return (client: string) =>
      Effect.suspend(() => {
        const answer = Deferred.makeUnsafe<void, RateLimited | Unavailable>()
        return Effect.andThen(enqueue(client, answer), Deferred.await(answer))
      })
  })
