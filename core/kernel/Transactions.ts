import { Context, type Effect } from "effect"

/**
 * One unit of work: every write that store ports make inside `atomically` commits together, or none does.
 * This is how a mutation keeps its idempotency record, its change, the outbox rows it implies and its
 * stored response in one step, so a crash at any instant leaves either all of it or nothing.
 *
 * - A nested `atomically` joins the unit it runs in; if the inner effect fails, its own writes are undone
 *   (a savepoint) and the outer unit goes on.
 * - A failure (typed error, defect or interruption) of the outermost effect undoes the whole unit.
 * - `afterCommit` runs its effect once the outermost unit has committed, or at once outside a unit, and
 *   never when the unit is undone: wake-ups of waiters and workers go there, so nobody is woken to read a
 *   change that is not visible yet. It is best effort (lost if the process dies right after the commit):
 *   work that must happen belongs in an outbox row written inside the unit.
 *
 * - `join` runs its effect inside the unit it is in without a savepoint of its own (a statement fewer on each
 *   side), or as a unit of its own outside one. Its writes are undone only with the whole unit: use it for an
 *   effect whose failure nobody inside the unit catches and goes on from (defects, or errors that fail the
 *   request).
 *
 * - A write that nothing later in its unit reads back (a new row the unit is done with, an outbox row, a kept
 *   response) may be held by its store and sent with the unit's end: it commits or is undone with the unit as
 *   any other, but the unit itself may not see it. Ports say which of their writes are such; a unit never
 *   reads back what it wrote through them.
 *
 * Infrastructure failures (the database unreachable, a failed commit) are defects, as for every port.
 */
export class Transactions extends Context.Service<
  Transactions,
  {
    readonly atomically: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    readonly join: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    readonly afterCommit: <R>(effect: Effect.Effect<void, never, R>) => Effect.Effect<void, never, R>
  }
>()("core/kernel/Transactions") {}
