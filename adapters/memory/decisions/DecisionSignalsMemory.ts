import { Deferred, Effect, Layer } from "effect"
import { DecisionSignals } from "../../../core/decisions/DecisionSignals.ts"
import { Transactions } from "../../../core/kernel/Transactions.ts"

/**
 * In-process wake-ups: one deferred per subscriber, all completed by one wake-up. `wake` is immediate; the
 * port's `signal` defers it through `Transactions.afterCommit`.
 */
export const makeInProcessSignals = Effect.sync(() => {
  const waiters = new Map<string, Set<Deferred.Deferred<void>>>()
  const wake = (decisionId: string) =>
    Effect.sync(() => {
      const set = waiters.get(decisionId)
      if (set === undefined) return
      waiters.delete(decisionId)
      for (const deferred of set) Deferred.doneUnsafe(deferred, Effect.void)
    })
  const subscribe = (decisionId: string) =>
    Effect.acquireRelease(
      Effect.sync(() => {
        const deferred = Deferred.makeUnsafe<void>()
        let set = waiters.get(decisionId)
        if (set === undefined) waiters.set(decisionId, (set = new Set()))
        set.add(deferred)
        return deferred
      }),
      (deferred) =>
        Effect.sync(() => {
          const set = waiters.get(decisionId)
          set?.delete(deferred)
          if (set?.size === 0) waiters.delete(decisionId)
        })
    ).pipe(Effect.map((deferred) => Deferred.await(deferred)))
  return { wake, subscribe }
})

/**
 * DecisionSignals in one process. A signal sent inside a unit of work wakes its waiters once the unit
 * commits, never before (they would read the decision as it was) and never if it is undone.
 */
export const DecisionSignalsMemory: Layer.Layer<DecisionSignals, never, Transactions> = Layer.effect(
  DecisionSignals,
  Effect.gen(function* () {
    const { wake, subscribe } = yield* makeInProcessSignals
    const transactions = yield* Transactions
    return DecisionSignals.of({
      signal: (decisionId) => transactions.afterCommit(wake(decisionId)),
      subscribe
    })
  })
)
