import { Deferred, Effect, Layer } from "effect"
import { DecisionSignals } from "../../../core/decisions/DecisionSignals.ts"

/** In-process wake-ups: one deferred per waiter, all completed by one signal. */
export const makeInProcessSignals = Effect.sync(() => {
  const waiters = new Map<string, Set<Deferred.Deferred<void>>>()
  const wake = (decisionId: string) =>
    Effect.sync(() => {
      const set = waiters.get(decisionId)
      if (set === undefined) return
      waiters.delete(decisionId)
      for (const deferred of set) Deferred.doneUnsafe(deferred, Effect.void)
    })
  return DecisionSignals.of({
    signal: wake,
    subscribe: (decisionId) =>
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
  })
})

export const DecisionSignalsMemory = Layer.effect(DecisionSignals, makeInProcessSignals)
