import { Cause, Context, Effect, Exit, Semaphore, Stream } from "effect"
import { type SqlClient, type SqlConnection, SqlError } from "effect/sql"
import { refuseNested, withAdded } from "./FiberServices.ts"
import { type HeldWriteStatements, writesPerStatement } from "./HeldWrites.ts"
import { type Guard, type HeldWrites, type OneStatement, type UnitRegistry, Units, unitAt } from "./UnitState.ts"

export type { Guard } from "./UnitState.ts"

/*
 * A shared unit that found no other to share with runs as ONE statement, without a transaction (`BEGIN` and
 * `COMMIT` are two round trips of a create's six): its reads go to the database as they come, each on its own
 * as in any transaction at read committed, and its writes, all of them held, go at its end as the parts of one
 * statement, which commits or fails whole. Its guards (its claim) are parts of that statement too, so a key
 * claimed meanwhile makes the statement fail, and the unit then runs again in a transaction, as any shared
 * unit whose group was undone, where its claim finds the other's outcome.
 *
 * What only a transaction gives, it cannot do: a statement that writes or locks (anything but a plain `SELECT`),
 * a nested unit, a transaction opened on the SQL client. Any of these spoils the run: its statement refused,
 * the unit runs again in a transaction, having left nothing behind. What must wait for the commit goes through
 * `Transactions.afterCommit` (or `afterUnitCommit`, for adapters holding only the SQL client): the SQL client's
 * own `afterCommit` knows no such unit and would run at once.
 */

const oneStatementOf = (sql: SqlClient.SqlClient, context: Context.Context<never>) => {
  const at = unitAt(sql, context)
  return at === undefined ? undefined : { unit: at.registry.oneStatements.get(at.level), level: at.level }
}

/**
 * `effect` once the unit of work it is called in has committed, whatever kind of unit that is: the SQL
 * client's own `afterCommit` for a transaction (at once outside one), and for a unit run as one statement,
 * once its statement has committed (the SQL client's would run at once there, before it). What
 * `Transactions.afterCommit` does, for the adapters that hold the SQL client rather than Transactions.
 */
export const afterUnitCommit = <R>(sql: SqlClient.SqlClient, effect: Effect.Effect<void, never, R>) =>
  Effect.withFiber<void, never, R>((fiber) => {
    const at = oneStatementOf(sql, fiber.context)
    const unit = at?.unit
    if (unit === undefined) return sql.afterCommit(effect)
    // Runs once the unit's statement has committed, with the services of now without the unit's level; from a
    // held write's read-back, with those of the fiber that ran the unit.
    unit.afterCommit.push({
      effect: effect as Effect.Effect<void>,
      context: at!.level === unit.last ? undefined : fiber.context
    })
    return Effect.void
  })

/**
 * The guards of the unit this runs in when it runs as one statement, to add one or replace the write of one;
 * elsewhere `undefined`, and the caller makes its statement as usual.
 */
export const oneStatementGuards = (sql: SqlClient.SqlClient): Effect.Effect<Array<Guard> | undefined> =>
  Effect.withFiber((fiber) => Effect.succeed(oneStatementOf(sql, fiber.context)?.unit?.guards))

/** What a unit run as one statement may send on its own: a plain read, which neither writes nor locks. */
const plainRead = /^\s*(SELECT|VALUES)\b/i
const notPlain =
  /\bFOR\s+(UPDATE|NO\s+KEY\s+UPDATE|SHARE|KEY\s+SHARE)\b|\b(pg_notify|nextval|setval|pg_advisory\w*)\s*\(/i

const spoils = (unit: OneStatement) => {
  unit.spoiled = true
  return new Error("a unit run as one statement made a statement that needs a transaction")
}

/** `connection` for a unit run as one statement: it sends plain reads and refuses anything else. */
const readsOnly = (connection: SqlConnection.Connection, unit: OneStatement): SqlConnection.Connection => {
  const refused = (text: string) => !plainRead.test(text) || notPlain.test(text)
  return {
    execute: (text, params, transform) =>
      refused(text) ? Effect.die(spoils(unit)) : connection.execute(text, params, transform),
    executeRaw: (text, params) => (refused(text) ? Effect.die(spoils(unit)) : connection.executeRaw(text, params)),
    executeStream: (text, params, transform) =>
      refused(text) ? Stream.die(spoils(unit)) : connection.executeStream(text, params, transform),
    executeValues: (text, params) =>
      refused(text) ? Effect.die(spoils(unit)) : connection.executeValues(text, params),
    executeValuesUnprepared: (text, params) =>
      refused(text) ? Effect.die(spoils(unit)) : connection.executeValuesUnprepared(text, params),
    executeUnprepared: (text, params, transform) =>
      refused(text) ? Effect.die(spoils(unit)) : connection.executeUnprepared(text, params, transform)
  }
}

/**
 * Whether a statement failed because the database refused it: it answered an error of its own, with a code, at
 * the level of one statement (`ERROR`), so nothing of a statement run outside a transaction stays. A lost
 * connection is no such answer, nor is an error that ends the session (`FATAL`, a server shutting down): that
 * may come after the commit.
 */
export const refusedByDatabase = (cause: Cause.Cause<unknown>): boolean =>
  cause.reasons.some((reason) => {
    const error = Cause.isFailReason(reason) ? reason.error : Cause.isDieReason(reason) ? reason.defect : undefined
    if (!SqlError.isSqlError(error) || error.reason._tag === "ConnectionError") return false
    const fields = error.reason.cause as
      { readonly code?: unknown; readonly severityUnlocalized?: unknown; readonly severity?: unknown } | undefined
    const level = fields?.severityUnlocalized ?? fields?.severity
    return typeof fields?.code === "string" && /^[0-9A-Z]{5}$/.test(fields.code) && level === "ERROR"
  })

/**
 * Units run as one statement over `sql`, their state in `registry`: `unitOn` makes one on a connection (alone,
 * or a member of a group's statement), `afterStatement` runs its after-commit effects once its statement has
 * committed, and `asOneStatement` runs a shared unit alone as one statement.
 */
export const oneStatementUnits = (
  sql: SqlClient.SqlClient,
  registry: UnitRegistry,
  { oneStatement }: HeldWriteStatements
) => {
  /** `effect` at `level` of the SQL client, with the registry its read-backs find their unit in. */
  const atLevel = <A, E, R>(effect: Effect.Effect<A, E, R>, level: SqlClient.TransactionConnection.Service) =>
    effect.pipe(Effect.provideService(sql.transactionService, level), Effect.provideService(Units, registry))

  /**
   * A unit run as one statement on `connection`: its held writes, and the services it adds to its fiber's (its
   * level, the registry, and the lock its nested units would take, which spoils its run); `last` is the level its
   * statement is sent at, on the connection itself (its after-commit effects wait for it still).
   */
  const unitOn = (connection: SqlConnection.Connection, lock: string) => {
    const last: SqlClient.TransactionConnection.Service = [connection, 0]
    const unit: OneStatement = {
      guards: [],
      afterCommit: [],
      last,
      spoiled: false,
      ran: { outer: Context.empty(), inner: Context.empty() }
    }
    const own: HeldWrites = { writes: [], open: true }
    const level: SqlClient.TransactionConnection.Service = [readsOnly(connection, unit), 0]
    registry.held.set(level, own)
    registry.oneStatements.set(level, unit)
    registry.oneStatements.set(last, unit)
    const nested = refuseNested(Semaphore.makeUnsafe(1), () => void (unit.spoiled = true))
    const services = new Map<string, unknown>([
      [sql.transactionService.key, level],
      [Units.key, registry],
      [lock, nested]
    ])
    return { unit, own, level, last, services }
  }

  /**
   * The after-commit effects of a unit run as one statement, once its statement has committed, each with the
   * services of its registration without the unit's level, and nothing else.
   */
  const afterCommitted = (unit: OneStatement) =>
    Effect.suspend(() => {
      // Registered with the unit's own services (the usual case) or by a held write's read-back: those of the
      // fiber that ran it, no copy made. Otherwise the registration's services without the level, made once per
      // set of services.
      const { outer, inner } = unit.ran
      let registered: Context.Context<never> | undefined | null = null
      let outside: Context.Context<never> = outer
      return Effect.forEach(
        unit.afterCommit,
        ({ effect, context }) => {
          if (context !== registered) {
            registered = context
            outside =
              context === undefined || context === inner
                ? outer
                : (Context.omit(sql.transactionService)(context) as Context.Context<never>)
          }
          // In place of the services of the fiber that runs them: merging would copy every one of the request's.
          return Effect.ignoreCause(
            Effect.updateContext(effect, (_: Context.Context<never>) => outside),
            { log: "Unhandled" }
          )
        },
        { discard: true }
      )
    })

  /**
   * `afterCommitted`, and then the unit is done: what it held (its writes, guards, effects and the request's
   * services) is let go at once, so that it dies young with the request rather than living on through the
   * unit's entries into the heap's old generation, which only a full collection empties.
   */
  const afterStatement = (unit: OneStatement, own: HeldWrites) =>
    Effect.ensuring(
      afterCommitted(unit),
      Effect.sync(() => {
        unit.guards.length = 0
        unit.afterCommit.length = 0
        unit.ran = { outer: Context.empty(), inner: Context.empty() }
        own.writes.length = 0
      })
    )

  /**
   * A shared unit alone, as one statement: its outcome once that statement has committed, or `undefined` when
   * nothing of it did and it must run again in a transaction.
   */
  const asOneStatement = <A, E, R>(effect: Effect.Effect<A, E, R>, lock: string) => {
    const run = Effect.gen(function* () {
      const connection = yield* Effect.orDie(sql.reserve)
      const { unit, own, last, services } = unitOn(connection, lock)
      const exit = yield* Effect.exit(withAdded(effect, services, unit))
      own.open = false
      const parts = unit.guards.length + own.writes.length
      if (Exit.isFailure(exit) || unit.spoiled || parts > writesPerStatement) return undefined
      if (parts === 0) return { exit, unit, own }
      const sent = yield* Effect.exit(atLevel(oneStatement(unit.guards, own.writes), last))
      if (Exit.isSuccess(sent)) return { exit, unit, own }
      // Nothing committed, or (a connection lost mid-way) what did is found by its guard's key when the unit
      // runs again. A unit with no guard cannot tell: its outcome is unknown, as after a failed COMMIT.
      if (unit.guards.length > 0) return undefined
      return yield* Effect.die(Cause.squash(sent.cause))
    })
    // The after-commit effects run once the connection is given back, as after a transaction.
    return Effect.flatMap(Effect.scoped(run), (ran) =>
      ran === undefined ? Effect.succeed(undefined) : Effect.as(afterStatement(ran.unit, ran.own), ran.exit)
    )
  }

  return { atLevel, unitOn, afterStatement, asOneStatement }
}
