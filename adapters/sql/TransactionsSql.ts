import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { Transactions } from "../../core/kernel/Transactions.ts"
import { groupCommit } from "./units/GroupCommit.ts"
import { heldWriteStatements } from "./units/HeldWrites.ts"
import { afterUnitCommit, oneStatementUnits } from "./units/OneStatement.ts"
import { transactionUnits } from "./units/Transaction.ts"
import { makeRegistry } from "./units/UnitState.ts"

/** How `TransactionsSql` runs shared units. */
export interface TransactionsSqlOptions {
  /**
   * Group commit (on by default): shared units that arrive together share one transaction or one statement, and
   * a shared unit alone runs as one statement when it can. Off (for debugging), each shared unit is a transaction
   * of its own, as `atomically`.
   */
  readonly grouping: boolean
}

/**
 * Whether the `TransactionsSql` layers built with it group shared units (`SQL_GROUP_COMMIT`); on by default.
 * Provided beside the database, it reaches every `TransactionsSql` built over it.
 */
export const SqlGroupCommit = Context.Reference<boolean>("hitl/adapters/sql/SqlGroupCommit", {
  defaultValue: () => true
})

/**
 * Units of work as database transactions (units/Transaction.ts): every statement inside `atomically` runs on the
 * transaction's connection (a nested unit is a savepoint). Writes held with `writeBehind` (units/HeldWrites.ts)
 * go to the database as one statement before the outermost unit commits, and a nested unit's held writes join
 * its parent's only if it succeeds. Shared units go through group commit (units/GroupCommit.ts): together in one
 * transaction or one statement, or alone as one statement (units/OneStatement.ts), their like statements gathered
 * (units/GatheredReads.ts). `afterCommit` waits for whichever kind of unit it is called in. A failure to begin or
 * commit, or of the held writes, is a defect, answered like any unreachable database. What the units hold lives
 * in this layer's scope, found by the stores through the services of the unit they run in.
 *
 * A unit, once begun, runs to its commit or rollback even if its caller goes away (a client that
 * disconnects mid-request, a server draining): cutting a statement off mid-flight would cost the pool its
 * connection, and on the embedded database, whose one session is then still closing, every request after
 * it would fail until it had.
 */
export const TransactionsSqlWith = (
  options: TransactionsSqlOptions
): Layer.Layer<Transactions, never, SqlClient.SqlClient> => Layer.effect(Transactions, make(options))

const make = Effect.fnUntraced(function* (options: TransactionsSqlOptions) {
  const sql = yield* SqlClient.SqlClient
  const scope = yield* Effect.scope
  const registry = makeRegistry()
  const statements = heldWriteStatements(sql)
  const units = transactionUnits(sql, registry, statements)
  const { atomically } = units
  const shared = options.grouping
    ? yield* groupCommit(sql, scope, registry, statements, oneStatementUnits(sql, registry, statements), units)
    : <A, E, R>(_key: string, effect: Effect.Effect<A, E, R>) => Effect.uninterruptible(atomically(effect))
  return Transactions.of({
    atomically,
    shared,
    // Inside a transaction its statements already run on the transaction's connection.
    join: (effect) =>
      Effect.flatMap(Effect.serviceOption(sql.transactionService), (open) =>
        open._tag === "Some" ? effect : atomically(effect)
      ),
    afterCommit: (effect) => afterUnitCommit(sql, effect)
  })
})

/** `TransactionsSqlWith`, grouping as `SqlGroupCommit` says (on unless turned off beside the database). */
export const TransactionsSql: Layer.Layer<Transactions, never, SqlClient.SqlClient> = Layer.effect(
  Transactions,
  Effect.flatMap(SqlGroupCommit, (grouping) => make({ grouping }))
)
