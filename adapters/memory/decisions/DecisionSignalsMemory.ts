import { Effect, Layer } from "effect"
import { DecisionSignals } from "../../../core/decisions/DecisionSignals.ts"
import { makeInProcessSignals } from "../../../core/kernel/InProcessSignals.ts"
import { Transactions } from "../../../core/kernel/Transactions.ts"

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
