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
 * - `shared(key, effect)` is `atomically` for a unit that may share its transaction with other shared units
 *   arriving at the same moment (group commit): they run side by side, each in its own fiber, their statements
 *   on one connection, and commit together; each is answered only after that commit. If any of them fails, or
 *   the commit does, the whole group is undone and each unit runs again alone, as `atomically`: so a shared
 *   unit may run twice, but only one run ever commits, and what it does outside the database must wait for
 *   `afterCommit`. Two shared units with the same `key` (an idempotency key) never share a transaction.
 *   A shared unit must not rely on isolation from its neighbours: it opens no nested unit of its own (one that
 *   fails undoes the group), takes no row lock to keep others out, and its held writes touch only rows of its
 *   own. Creates of new rows are such units; a move of an existing row is not. The same rules let an adapter
 *   run a shared unit that has no neighbour as one statement, without a transaction (adapters/sql).
 *
 * Infrastructure failures (the database unreachable, a failed commit) are defects, as for every port.
 */
export class Transactions extends Context.Service<
  Transactions,
  {
    readonly atomically: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    readonly join: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    readonly shared: <A, E, R>(key: string, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    readonly afterCommit: <R>(effect: Effect.Effect<void, never, R>) => Effect.Effect<void, never, R>
  }
>()("core/kernel/Transactions") {}
