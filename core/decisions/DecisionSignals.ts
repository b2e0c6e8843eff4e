import { Context, Effect, Scope } from "effect"

/**
 * Wake-ups for long-polling readers: a change to a decision is signalled once and every subscriber to it
 * wakes (pushed, not polled). In-process for one server; across instances through the database's
 * notifications. The long-polls of one decision share one subscriber (core/decisions/DecisionWatches.ts).
 */
export class DecisionSignals extends Context.Service<
  DecisionSignals,
  {
    /**
     * Wakes the decision's subscribers once the unit of work it is sent in commits (at once outside one),
     * and never if that unit is undone: woken before the commit, a reader would see the decision as it was
     * and miss the change.
     */
    readonly signal: (decisionId: string) => Effect.Effect<void>
    /**
     * Starts listening at once and answers an effect that completes at the next signal after that
     * moment; subscribe before reading, so a change between the read and the wait is never missed.
     */
    readonly subscribe: (decisionId: string) => Effect.Effect<Effect.Effect<void>, never, Scope.Scope>
  }
>()("core/decisions/DecisionSignals") {}
