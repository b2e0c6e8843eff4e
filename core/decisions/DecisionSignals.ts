import { Context, Effect, Scope } from "effect"

/**
 * Wake-ups for long-polling readers: a change to a decision is signalled once and every waiter on it
 * wakes (pushed, not polled per waiter). In-process for one server; across instances through the
 * database's notifications.
 */
export class DecisionSignals extends Context.Service<
  DecisionSignals,
  {
    readonly signal: (decisionId: string) => Effect.Effect<void>
    /**
     * Starts listening at once and answers an effect that completes at the next signal after that
     * moment; subscribe before reading, so a change between the read and the wait is never missed.
     */
    readonly subscribe: (decisionId: string) => Effect.Effect<Effect.Effect<void>, never, Scope.Scope>
  }
>()("core/decisions/DecisionSignals") {}
