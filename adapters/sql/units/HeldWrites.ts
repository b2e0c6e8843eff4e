import { Effect } from "effect"
import type { SqlClient, SqlError, Statement } from "effect/sql"
import { type Guard, type HeldWrite, type ReadBack, unitAt } from "./UnitState.ts"

export type { ReadBack } from "./UnitState.ts"

/** How many held writes go in one statement at most. */
export const writesPerStatement = 200

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
    const at = unitAt(sql, fiber.context)
    const unit = at === undefined ? undefined : at.registry.held.get(at.level)
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
 * How held writes and guards go to the database: `oneStatement` sends them as one statement, each a named part
 * of its `WITH`, the writes' `read` queries its result, and a guard whose write returned no row divides by zero,
 * which fails the statement; `flush` sends a unit's held writes before its commit, in one statement or several
 * for a unit holding very many, each well under Postgres's limit of parameters per statement.
 */
export const heldWriteStatements = (sql: SqlClient.SqlClient) => {
  const oneStatement = Effect.fnUntraced(function* (guards: ReadonlyArray<Guard>, writes: ReadonlyArray<HeldWrite>) {
    const parts = [
      ...guards.map(({ write }, i) => sql`${sql(`g${i}`)} AS (${write})`),
      ...writes.map(({ write }, i) => sql`${sql(`w${i}`)} AS (${write})`)
    ]
    const checks = [
      ...guards.map((_, i) => sql`1 / (SELECT count(*)::integer FROM ${sql(`g${i}`)}) AS ${sql(`g${i}`)}`),
      ...writes.flatMap(({ read }, i) =>
        read === undefined ? [] : [sql`(${read.query(sql`${sql(`w${i}`)}`)}) AS ${sql(`v${i}`)}`]
      )
    ]
    const rows = yield* sql<Record<string, unknown>>`WITH ${sql.csv(parts)} SELECT ${
      checks.length === 0 ? sql`1` : sql.csv(checks)
    }`
    for (const [i, { read }] of writes.entries()) {
      if (read !== undefined) yield* read.onValue(rows[0]?.[`v${i}`] ?? null)
    }
  })

  const flush = Effect.fnUntraced(function* (writes: ReadonlyArray<HeldWrite>) {
    for (let start = 0; start < writes.length; start += writesPerStatement) {
      yield* oneStatement([], writes.slice(start, start + writesPerStatement))
    }
  })

  return { oneStatement, flush }
}

export type HeldWriteStatements = ReturnType<typeof heldWriteStatements>
