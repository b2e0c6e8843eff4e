import { Effect, Layer } from "effect"
import { SqlClient, SqlError } from "effect/sql"
import { Transactions } from "../../core/kernel/Transactions.ts"

/**
 * Units of work as database transactions: every statement inside `atomically` runs on the transaction's
 * connection (a nested unit is a savepoint), and `afterCommit` is the SQL client's own after-commit hook.
 * A failure to begin or commit is a defect, answered like any unreachable database.
 *
 * A unit, once begun, runs to its commit or rollback even if its caller goes away (a client that
 * disconnects mid-request, a server draining): cutting a statement off mid-flight would cost the pool its
 * connection, and on the embedded database, whose one session is then still closing, every request after
 * it would fail until it had.
 */
export const TransactionsSql: Layer.Layer<Transactions, never, SqlClient.SqlClient> = Layer.effect(
  Transactions,
  Effect.map(SqlClient.SqlClient, (sql) => {
    const atomically = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      sql
        .withTransaction(effect)
        .pipe(Effect.catchIf(SqlError.isSqlError, (error) => Effect.die(error))) as Effect.Effect<A, E, R>
    return Transactions.of({
      atomically,
      // Inside a transaction its statements already run on the transaction's connection.
      join: (effect) =>
        Effect.flatMap(Effect.serviceOption(sql.transactionService), (open) =>
          open._tag === "Some" ? effect : atomically(effect)
        ),
      afterCommit: (effect) => sql.afterCommit(effect)
    })
  })
)
