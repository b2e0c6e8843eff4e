import { Context, Effect, Layer } from "effect"
import { SqlClient, SqlError, type Statement } from "effect/sql"
import { Transactions } from "../../core/kernel/Transactions.ts"

/** A write a unit never reads back, held until the unit's end (`writeBehind`). */
interface HeldWrite {
  readonly write: Statement.Fragment
  readonly read: ReadBack | undefined
}

/** A query over a held write's rows, and what to do with the one value it yields. */
export interface ReadBack {
  /** Yields at most one value (`NULL` for no row). */
  readonly query: (rows: Statement.Fragment) => Statement.Fragment
  readonly onValue: (value: unknown) => Effect.Effect<void>
}

/** The writes held by one level of a unit (the unit, or one of its nested units) while it runs. */
interface HeldWrites {
  readonly writes: Array<HeldWrite>
  open: boolean
}

/**
 * Keyed by the SQL client's transaction level (its connection and depth, one value per level), so a level
 * begun by `withTransaction` directly, which `TransactionsSql` does not end, has none: writes there run at once.
 */
const held = new WeakMap<SqlClient.TransactionConnection.Service, HeldWrites>()

/** How many held writes go in one statement at most. */
const writesPerStatement = 200

/**
 * Sends `write` (an INSERT, UPDATE or DELETE whose outcome the caller does not need) with the last statement
 * of the unit it is made in, instead of in a round trip of its own; outside a unit, or in a transaction that
 * `TransactionsSql` did not begin, it runs at once. `read.query(rows)`, when given, is a query over the rows
 * the write returns (its `RETURNING`) that yields at most one value, run in the same statement (a
 * notification that only a write that added a row sends, for instance); `read.onValue` gets that value once
 * the statement has run, still inside the unit.
 *
 * The write is still part of the unit: it commits with it, is dropped with a nested unit that fails, and if it
 * fails the whole unit is undone (nothing is acknowledged). What it cannot do is be seen by the unit itself:
 * use it only for rows nothing later in the unit reads or writes again (an outbox row, a kept response, a
 * newly created row the unit is done with). Held writes run as the parts of one statement, each seeing the
 * database as it was before the statement, so no two of them may touch the same row.
 */
export const writeBehind = (
  sql: SqlClient.SqlClient,
  write: Statement.Statement<unknown>,
  read?: ReadBack
): Effect.Effect<void, SqlError.SqlError> =>
  Effect.withFiber((fiber) => {
    const level = Context.getOrUndefined(fiber.context, sql.transactionService)
    const unit = level === undefined ? undefined : held.get(level)
    if (unit === undefined) {
      if (read === undefined) return Effect.asVoid(write)
      return Effect.flatMap(
        sql<{ readonly value: unknown }>`WITH written AS (${write}) SELECT (${read.query(sql`written`)}) AS value`,
        (rows) => read.onValue(rows[0]?.value ?? null)
      )
    }
    if (!unit.open) return Effect.die(new Error("a write was held for a unit that has already ended"))
    unit.writes.push({ write, read })
    return Effect.void
  })

/**
 * Units of work as database transactions: every statement inside `atomically` runs on the transaction's
 * connection (a nested unit is a savepoint), and `afterCommit` is the SQL client's own after-commit hook.
 * Writes held with `writeBehind` go to the database as one statement before the outermost unit commits, and
 * a nested unit's held writes join its parent's only if it succeeds. A failure to begin or commit, or of the
 * held writes, is a defect, answered like any unreachable database.
 *
 * A unit, once begun, runs to its commit or rollback even if its caller goes away (a client that
 * disconnects mid-request, a server draining): cutting a statement off mid-flight would cost the pool its
 * connection, and on the embedded database, whose one session is then still closing, every request after
 * it would fail until it had.
 */
export const TransactionsSql: Layer.Layer<Transactions, never, SqlClient.SqlClient> = Layer.effect(
  Transactions,
  Effect.map(SqlClient.SqlClient, (sql) => {
    /**
     * The held writes as one statement: each a named part of its `WITH`, their `read` queries its result. A unit
     * holding very many writes sends them in several such statements, each well under Postgres's limit of
     * parameters per statement.
     */
    const flush = Effect.fnUntraced(function* (writes: ReadonlyArray<HeldWrite>) {
      for (let start = 0; start < writes.length; start += writesPerStatement) {
        const chunk = writes.slice(start, start + writesPerStatement)
        const name = (i: number) => sql`${sql(`w${i}`)}`
        const parts = sql.csv(chunk.map(({ write }, i) => sql`${name(i)} AS (${write})`))
        const reads = chunk.flatMap(({ read }, i) =>
          read === undefined ? [] : [sql`(${read.query(name(i))}) AS ${sql(`v${i}`)}`]
        )
        const rows = yield* sql<
          Record<string, unknown>
        >`WITH ${parts} SELECT ${reads.length === 0 ? sql`1` : sql.csv(reads)}`
        for (const [i, { read }] of chunk.entries()) {
          if (read !== undefined) yield* read.onValue(rows[0]?.[`v${i}`] ?? null)
        }
      }
    })

    const atomically = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.withFiber<A, E, R>((outer) => {
        const outerLevel = Context.getOrUndefined(outer.context, sql.transactionService)
        const parent = outerLevel === undefined ? undefined : held.get(outerLevel)
        const unit = Effect.withFiber<A, E | SqlError.SqlError, R>((inner) => {
          const own: HeldWrites = { writes: [], open: true }
          held.set(Context.getUnsafe(inner.context, sql.transactionService), own)
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
          .withTransaction(unit)
          .pipe(Effect.catchIf(SqlError.isSqlError, (error) => Effect.die(error))) as Effect.Effect<A, E, R>
      })
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
