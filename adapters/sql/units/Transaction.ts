import { Context, Effect } from "effect"
import { type SqlClient, SqlError } from "effect/sql"
import { nestedKeyIn } from "./FiberServices.ts"
import type { HeldWriteStatements } from "./HeldWrites.ts"
import { type HeldWrites, type UnitRegistry, Units } from "./UnitState.ts"

/**
 * Units of work as database transactions over `sql` (`Transactions.atomically`): every statement inside runs on
 * the transaction's connection, a nested unit is a savepoint, and the writes held with `writeBehind` go to the
 * database (`flush`) before the outermost unit commits; a nested unit's held writes join its parent's only if
 * it succeeds. A unit inside a unit of another `TransactionsSql` over the same client keeps that one's
 * registry, so the two see the same units. `nestedKey` is the key of the SQL client's lock for nested
 * transactions, learnt from the first transaction (it names the client it belongs to).
 */
export const transactionUnits = (sql: SqlClient.SqlClient, registry: UnitRegistry, { flush }: HeldWriteStatements) => {
  let nestedKey: string | undefined

  const atomically = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.withFiber<A, E, R>((outer) => {
      const outerLevel = Context.getOrUndefined(outer.context, sql.transactionService)
      const known = Context.getOrUndefined(outer.context, Units)
      const units = known ?? registry
      const group = outerLevel === undefined ? undefined : units.groups.get(outerLevel)
      // In a shared unit a savepoint would take in its neighbours' statements: no savepoint, and a failure
      // undoes the whole group instead (each member then runs again alone, where this is a savepoint).
      if (group !== undefined) return Effect.onError(effect, () => Effect.sync(() => void (group.undone = true)))
      // The same in a unit run as one statement: a failure spoils its run, which then goes again in a transaction.
      const alone = outerLevel === undefined ? undefined : units.oneStatements.get(outerLevel)
      if (alone !== undefined) return Effect.onError(effect, () => Effect.sync(() => void (alone.spoiled = true)))
      const parent = outerLevel === undefined ? undefined : units.held.get(outerLevel)
      const unit = Effect.withFiber<A, E | SqlError.SqlError, R>((inner) => {
        if (nestedKey === undefined) nestedKey = nestedKeyIn(inner.context)
        const own: HeldWrites = { writes: [], open: true }
        units.held.set(Context.getUnsafe(inner.context, sql.transactionService), own)
        return Effect.flatMap(
          Effect.onExit(effect, () => Effect.sync(() => void (own.open = false))),
          (result) => {
            if (own.writes.length === 0) return Effect.succeed(result)
            // A nested unit that succeeded hands its writes to its parent, which sends them or drops them.
            if (parent !== undefined && parent.open) {
              parent.writes.push(...own.writes)
              return Effect.succeed(result)
            }
            return Effect.as(flush(own.writes), result)
          }
        )
      })
      return sql
        .withTransaction(known === undefined ? Effect.provideService(unit, Units, registry) : unit)
        .pipe(Effect.catchIf(SqlError.isSqlError, (error) => Effect.die(error))) as Effect.Effect<A, E, R>
    })

  return { atomically, nestedKey: (): string | undefined => nestedKey }
}
