import { Context, Effect, Exit, Layer, Semaphore } from "effect"
import { Transactions } from "../../core/kernel/Transactions.ts"

/** The unit the current fiber runs in, if any: its after-commit effects, in registration order. */
const CurrentUnit = Context.Reference<{ readonly afterCommit: Array<Effect.Effect<void>> } | undefined>(
  "adapters/memory/TransactionsMemory/CurrentUnit",
  { defaultValue: () => undefined }
)

/**
 * Units of work over the memory adapters. Each memory store operation is one synchronous step, so what a
 * unit needs is that no other unit interleaves with it: units take turns (one lock per layer), and a
 * duplicate request therefore waits for the first one and then sees its stored response. Memory cannot undo
 * a write, so a unit that fails keeps what it wrote before failing; use cases check before they write, and
 * a memory store dies with its process anyway, which is the crash the SQL adapter guards against.
 */
export const TransactionsMemory: Layer.Layer<Transactions> = Layer.sync(Transactions, () => {
  const lock = Semaphore.makeUnsafe(1)
  // A nested unit cannot be undone on its own in memory either: joining and nesting are the same here.
  const atomically: Transactions["Service"]["atomically"] = (effect) =>
    Effect.flatMap(CurrentUnit, (unit) => {
      if (unit !== undefined) return effect
      const next = { afterCommit: [] as Array<Effect.Effect<void>> }
      return lock
        .withPermits(1)(Effect.provideService(effect, CurrentUnit, next))
        .pipe(
          Effect.onExit((exit) =>
            Exit.isSuccess(exit) ? Effect.forEach(next.afterCommit, (f) => f, { discard: true }) : Effect.void
          )
        )
    })
  return Transactions.of({
    atomically,
    join: atomically,
    // Units take turns here anyway: nothing to share.
    shared: (_key, effect) => atomically(effect),
    afterCommit: (effect) =>
      Effect.flatMap(CurrentUnit, (unit) =>
        unit === undefined
          ? effect
          : Effect.map(Effect.context<never>(), (context) => {
              unit.afterCommit.push(Effect.provideContext(effect, context as never))
            })
      )
  })
})
