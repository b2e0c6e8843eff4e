import { Cause, Context, Deferred, Effect, Exit, Layer, Semaphore, Stream } from "effect"
import { SqlClient, type SqlConnection, SqlError, type Statement } from "effect/sql"
import * as Tracer from "effect/Tracer"
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
 * A write that decides whether a unit run as one statement may commit (an idempotency claim): the statement
 * fails, and nothing of it stays, unless `write` returns a row. Until the unit ends its maker may replace
 * `write` (the claim by the claim already holding its response, say); `tag` tells its maker which it is.
 */
export interface Guard {
  write: Statement.Fragment
  readonly tag: unknown
}

/**
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
interface OneStatement {
  readonly guards: Array<Guard>
  /**
   * Each with the services of its registration (the unit's level among them, taken out when it runs); those
   * registered by a held write's read-back (at the level of the unit's statement) with the services of the fiber
   * that ran the unit (`undefined` here).
   */
  readonly afterCommit: Array<{
    readonly effect: Effect.Effect<void>
    readonly context: Context.Context<never> | undefined
  }>
  /** The level its statement is sent at, after its end (its held writes' read-backs see this one). */
  readonly last: SqlClient.TransactionConnection.Service
  spoiled: boolean
  /**
   * The services of the fiber that ran the unit (`outer`: never inside a unit, as a unit run as one statement
   * begins only outside one) and those the unit ran with (`inner`: the unit's own added), once it has begun.
   */
  ran: { readonly outer: Context.Context<never>; readonly inner: Context.Context<never> }
}

/** Keyed like `held`: the unit run as one statement whose level it is. */
const oneStatements = new WeakMap<SqlClient.TransactionConnection.Service, OneStatement>()

const oneStatementOf = (sql: SqlClient.SqlClient, context: Context.Context<never>): OneStatement | undefined => {
  const level = Context.getOrUndefined(context, sql.transactionService)
  return level === undefined ? undefined : oneStatements.get(level)
}

/**
 * `effect` once the unit of work it is called in has committed, whatever kind of unit that is: the SQL
 * client's own `afterCommit` for a transaction (at once outside one), and for a unit run as one statement,
 * once its statement has committed (the SQL client's would run at once there, before it). What
 * `Transactions.afterCommit` does, for the adapters that hold the SQL client rather than Transactions.
 */
export const afterUnitCommit = <R>(sql: SqlClient.SqlClient, effect: Effect.Effect<void, never, R>) =>
  Effect.withFiber<void, never, R>((fiber) => {
    const level = Context.getOrUndefined(fiber.context, sql.transactionService)
    const unit = level === undefined ? undefined : oneStatements.get(level)
    if (unit === undefined) return sql.afterCommit(effect)
    // Runs once the unit's statement has committed, with the services of now without the unit's level; from a
    // held write's read-back, with those of the fiber that ran the unit.
    unit.afterCommit.push({
      effect: effect as Effect.Effect<void>,
      context: level === unit.last ? undefined : fiber.context
    })
    return Effect.void
  })

/**
 * The guards of the unit this runs in when it runs as one statement, to add one or replace the write of one;
 * elsewhere `undefined`, and the caller makes its statement as usual.
 */
export const oneStatementGuards = (sql: SqlClient.SqlClient): Effect.Effect<Array<Guard> | undefined> =>
  Effect.withFiber((fiber) => Effect.succeed(oneStatementOf(sql, fiber.context)?.guards))

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

/** Statements of one kind that the members of a shared unit make at the same moment, waiting to go as one. */
interface Gather {
  readonly items: Array<unknown>
  readonly answers: Array<Deferred.Deferred<unknown, unknown>>
}

/** The transaction of a group of shared units (`Transactions.shared`). */
interface Group {
  /** A member's nested unit failed: its savepoint could not be undone alone, so the group is undone. */
  undone: boolean
  readonly gathers: Map<symbol, Gather>
  readonly reads: Map<string, Deferred.Deferred<unknown, unknown>>
}

/** Keyed like `held`: the group whose transaction a level is. */
const groups = new WeakMap<SqlClient.TransactionConnection.Service, Group>()

const groupOf = (sql: SqlClient.SqlClient, context: Context.Context<never>): Group | undefined => {
  const level = Context.getOrUndefined(context, sql.transactionService)
  return level === undefined ? undefined : groups.get(level)
}

/**
 * `run` for the items the members of one shared unit pass at the same moment, gathered into one call (one
 * statement for all of them); elsewhere (outside a shared unit, or in one alone) `run` gets the one item. `run`
 * answers one result per item, in their order. The first member to call waits one turn of the scheduler for
 * the others, which are started together. When the call fails, every member of it fails, and so the group is
 * undone and each member runs again alone.
 */
export const gatheredInShared = <A, B, E>(
  sql: SqlClient.SqlClient,
  run: (items: ReadonlyArray<A>) => Effect.Effect<ReadonlyArray<B>, E>
): ((item: A) => Effect.Effect<B, E>) => {
  const kind = Symbol()
  const one = (items: ReadonlyArray<A>) =>
    Effect.flatMap(run(items), (results) =>
      results.length === items.length
        ? Effect.succeed(results)
        : Effect.die(new Error(`a gathered statement answered ${results.length} results for ${items.length} items`))
    )
  return (item) =>
    Effect.withFiber((fiber) => {
      const group = groupOf(sql, fiber.context)
      if (group === undefined) return Effect.map(one([item]), (results) => results[0]!)
      const answer = Deferred.makeUnsafe<B, E>()
      const open = group.gathers.get(kind)
      if (open !== undefined) {
        open.items.push(item)
        open.answers.push(answer as Deferred.Deferred<unknown, unknown>)
        return Deferred.await(answer)
      }
      const gather: Gather = { items: [item], answers: [answer as Deferred.Deferred<unknown, unknown>] }
      group.gathers.set(kind, gather)
      return Effect.yieldNow.pipe(
        Effect.andThen(
          Effect.suspend(() => {
            group.gathers.delete(kind)
            return Effect.exit(one(gather.items as ReadonlyArray<A>))
          })
        ),
        Effect.flatMap((exit) => {
          for (const [i, waiting] of gather.answers.entries()) {
            Deferred.doneUnsafe(waiting, Exit.isSuccess(exit) ? Exit.succeed(exit.value[i]) : exit)
          }
          return Deferred.await(answer)
        })
      )
    })
}

/**
 * `read` once for all the members of one shared unit that ask for the same `key` (a role read for the creates of
 * one role, say): they share its answer, as if they had read at the same moment. Elsewhere it simply runs.
 * Only for reads of rows that no member of the group writes.
 */
export const onceInShared = <A, E, R>(
  sql: SqlClient.SqlClient,
  key: string,
  read: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    const group = groupOf(sql, fiber.context)
    if (group === undefined) return read
    const known = group.reads.get(key) as Deferred.Deferred<A, E> | undefined
    if (known !== undefined) return Deferred.await(known)
    const answer = Deferred.makeUnsafe<A, E>()
    group.reads.set(key, answer as Deferred.Deferred<unknown, unknown>)
    return Effect.onExit(read, (exit) => Deferred.done(answer, exit))
  })

/**
 * How a member of a group runs: in the group's transaction, or (`unit` given) as a unit of one statement whose
 * guards and held writes go in the group's one statement; `services` are the ones it adds to its fiber's.
 */
interface InGroup {
  readonly services: ReadonlyMap<string, unknown>
  readonly unit: { readonly statement: OneStatement; readonly own: HeldWrites } | undefined
}

/**
 * What became of a group: committed, undone (nothing of it stays), or unknown (its statement was cut off: what
 * committed is found by the guards' keys, and a member with none cannot tell).
 */
type GroupOutcome = "committed" | "undone" | { readonly unknown: Cause.Cause<unknown> }

/** A unit waiting to run in a group (`Transactions.shared`). */
interface Member {
  /** Its key in `Transactions.shared` (an idempotency key's scope and key, for a create that has one). */
  readonly key: string
  /**
   * How to run in the group; `"alone"`: run as `atomically`; `"one statement"`: run alone as one statement if it
   * can (`OneStatement`), else as `atomically`.
   */
  readonly start: Deferred.Deferred<InGroup | "alone" | "one statement">
  /** The member's own run ended: whether it succeeded. */
  readonly finished: Deferred.Deferred<boolean>
  /** What became of the group. */
  readonly outcome: Deferred.Deferred<GroupOutcome>
}

/** At most this many units share one transaction. */
const maxGroup = 64

/**
 * How many of `waiting` units go in the next group: the largest power of two that is no more than they are (nor
 * `maxGroup`); the others wait for the group after. A group run as one statement has a text of its own for each
 * number of members. The SQL client prepares each text once per connection, and the database parses it then and
 * plans it anew on its first few runs there: with sizes of 1, 2, 4 ... 64 a kind of unit makes seven texts, soon
 * prepared and planned on every connection, where any size would make up to 64, many of them sent too seldom to
 * get there. (Measured side by side at 32 connections: Postgres CPU per create a tenth to a fifth lower.)
 */
const groupSize = (waiting: number): number => 2 ** Math.floor(Math.log2(Math.min(waiting, maxGroup)))

/** At most this many guards and held writes in a group's one statement; a group with more runs each unit alone. */
const partsPerGroupStatement = 640

/**
 * After a group run as one statement was spoiled by a unit that needs a transaction, this many groups run as
 * transactions: units of that kind tend to come together.
 */
const transactionGroupsAfterSpoil = 64

/**
 * Whether a statement failed because the database refused it: it answered an error of its own, with a code, at
 * the level of one statement (`ERROR`), so nothing of a statement run outside a transaction stays. A lost
 * connection is no such answer, nor is an error that ends the session (`FATAL`, a server shutting down): that
 * may come after the commit.
 */
const refusedByDatabase = (cause: Cause.Cause<unknown>): boolean =>
  cause.reasons.some((reason) => {
    const error = Cause.isFailReason(reason) ? reason.error : Cause.isDieReason(reason) ? reason.defect : undefined
    if (!SqlError.isSqlError(error) || error.reason._tag === "ConnectionError") return false
    const fields = error.reason.cause as
      { readonly code?: unknown; readonly severityUnlocalized?: unknown; readonly severity?: unknown } | undefined
    const level = fields?.severityUnlocalized ?? fields?.severity
    return typeof fields?.code === "string" && /^[0-9A-Z]{5}$/.test(fields.code) && level === "ERROR"
  })

/** At most this many groups (or units alone) at once; units arriving meanwhile wait to go in the next group. */
const maxGroupsInFlight = 4

/** The group was not committed: each member runs again alone. */
class GroupUndone {
  readonly _tag = "GroupUndone"
}

/**
 * The services a level of a transaction adds to its fiber's (the connection, the after-commit buffer and the
 * like), without its span: a member's statements stay in its own request's trace.
 */
const transactionServices = (inside: Context.Context<never>, outside: Context.Context<never>, group: Group) => {
  const added = new Map<string, unknown>()
  for (const [key, value] of inside.mapUnsafe) {
    if (key === Tracer.ParentSpanKey || outside.mapUnsafe.get(key) === value) continue
    added.set(
      key,
      key.startsWith(nestedTransactionsKey)
        ? refuseNested(value as Semaphore.Semaphore, () => void (group.undone = true))
        : value
    )
  }
  return added
}

/**
 * `effect` with `services` (by key) added to its fiber's own. Added one by one, each is a layer over the
 * fiber's services; `Effect.provideContext` would merge instead, copying every service of the request (twice
 * when services were added since its last copy), for each unit.
 */
const withAdded = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  services: ReadonlyMap<string, unknown>,
  unit?: OneStatement | undefined
) =>
  Effect.updateContext(effect, (context: Context.Context<never>) => {
    let next = context
    for (const [key, value] of services) next = Context.addUnsafe(next, key, value)
    if (unit !== undefined) unit.ran = { outer: context, inner: next }
    return next as Context.Context<R>
  })

/** The SQL client's lock that its nested transactions (savepoints) take, by the prefix of its service's key. */
const nestedTransactionsKey = "effect/sql/SqlClient/TransactionSemaphore/"

const nestedKeyIn = (context: Context.Context<never>): string | undefined => {
  for (const key of context.mapUnsafe.keys()) if (key.startsWith(nestedTransactionsKey)) return key
  return undefined
}

/**
 * In a shared unit a savepoint opened on the SQL client directly (not through `atomically`) would take in its
 * neighbours' statements: opening one fails instead, before any statement, which undoes the group, and the
 * unit then runs alone, where its savepoint is its own (even if the unit caught the failure and went on).
 */
const refuseNested = (lock: Semaphore.Semaphore, refused: () => void): Semaphore.Semaphore =>
  Object.assign(Object.create(lock) as Semaphore.Semaphore, {
    withPermit: () =>
      Effect.suspend(() => {
        refused()
        return Effect.die(new Error("a shared unit opened a transaction of its own"))
      })
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
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const scope = yield* Effect.scope
    /**
     * Held writes and guards as one statement: each a named part of its `WITH`, the writes' `read` queries its
     * result, and a guard whose write returned no row divides by zero, which fails the statement.
     */
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

    /**
     * The held writes of a unit before its commit: one statement, or several for a unit holding very many, each
     * well under Postgres's limit of parameters per statement.
     */
    const flush = Effect.fnUntraced(function* (writes: ReadonlyArray<HeldWrite>) {
      for (let start = 0; start < writes.length; start += writesPerStatement) {
        yield* oneStatement([], writes.slice(start, start + writesPerStatement))
      }
    })

    /**
     * The key of the SQL client's lock for nested transactions, learnt from the first transaction (it names the
     * client it belongs to): until it is known no unit runs as one statement, which must refuse that lock.
     */
    let nestedKey: string | undefined

    /**
     * A unit run as one statement on `connection` (see `OneStatement`): its held writes, and the services it adds
     * to its fiber's (its level, and the lock its nested units would take, which spoils its run); `last` is the
     * level its statement is sent at, on the connection itself (its after-commit effects wait for it still).
     */
    const oneStatementUnit = (connection: SqlConnection.Connection, lock: string) => {
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
      held.set(level, own)
      oneStatements.set(level, unit)
      oneStatements.set(last, unit)
      const nested = refuseNested(Semaphore.makeUnsafe(1), () => void (unit.spoiled = true))
      const services = new Map<string, unknown>([
        [sql.transactionService.key, level],
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
     * A shared unit alone, as one statement (see `OneStatement`): its outcome once that statement has committed,
     * or `undefined` when nothing of it did and it must run again in a transaction.
     */
    const asOneStatement = <A, E, R>(effect: Effect.Effect<A, E, R>, lock: string) => {
      const run = Effect.gen(function* () {
        const connection = yield* Effect.orDie(sql.reserve)
        const { unit, own, last, services } = oneStatementUnit(connection, lock)
        const exit = yield* Effect.exit(withAdded(effect, services, unit))
        own.open = false
        const parts = unit.guards.length + own.writes.length
        if (Exit.isFailure(exit) || unit.spoiled || parts > writesPerStatement) return undefined
        if (parts === 0) return { exit, unit, own }
        const sent = yield* Effect.exit(
          oneStatement(unit.guards, own.writes).pipe(Effect.provideService(sql.transactionService, last))
        )
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

    const atomically = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.withFiber<A, E, R>((outer) => {
        const outerLevel = Context.getOrUndefined(outer.context, sql.transactionService)
        const group = outerLevel === undefined ? undefined : groups.get(outerLevel)
        // In a shared unit a savepoint would take in its neighbours' statements: no savepoint, and a failure
        // undoes the whole group instead (each member then runs again alone, where this is a savepoint).
        if (group !== undefined) return Effect.onError(effect, () => Effect.sync(() => void (group.undone = true)))
        // The same in a unit run as one statement: a failure spoils its run, which then goes again in a transaction.
        const alone = outerLevel === undefined ? undefined : oneStatements.get(outerLevel)
        if (alone !== undefined) return Effect.onError(effect, () => Effect.sync(() => void (alone.spoiled = true)))
        const parent = outerLevel === undefined ? undefined : held.get(outerLevel)
        const unit = Effect.withFiber<A, E | SqlError.SqlError, R>((inner) => {
          if (nestedKey === undefined) nestedKey = nestedKeyIn(inner.context)
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
    const pending: Array<Member> = []
    /** Groups still to run as transactions since a group's statement was spoiled (see `runStatementGroup`). */
    let transactionGroupsLeft = 0
    /** The keys of the units waiting for a group or running in one. */
    const busy = new Set<string>()
    let inFlight = 0

    /**
     * One transaction for `members`, their own runs side by side in it; answers whether it committed, or
     * `undefined` when it never began (no connection, a failed `BEGIN`) and the members were not started.
     */
    const runGroup = (members: ReadonlyArray<Member>) =>
      Effect.withFiber<boolean | undefined>((fiber) => {
        // The fiber's services before the transaction (the fiber is the same inside, with more services).
        const outside = fiber.context
        let started = false
        return sql
          .withTransaction(
            Effect.withFiber<void, GroupUndone | SqlError.SqlError>((inside) => {
              const level = Context.getUnsafe(inside.context, sql.transactionService)
              const group: Group = { undone: false, gathers: new Map(), reads: new Map() }
              const own: HeldWrites = { writes: [], open: true }
              groups.set(level, group)
              held.set(level, own)
              const services = transactionServices(inside.context, outside, group)
              started = true
              const inGroup: InGroup = { services, unit: undefined }
              for (const member of members) Deferred.doneUnsafe(member.start, Exit.succeed(inGroup))
              return Effect.forEach(members, (member) => Deferred.await(member.finished)).pipe(
                Effect.flatMap((succeeded): Effect.Effect<void, GroupUndone | SqlError.SqlError> => {
                  own.open = false
                  return group.undone || succeeded.includes(false) ? Effect.fail(new GroupUndone()) : flush(own.writes)
                })
              )
            })
          )
          .pipe(
            Effect.exit,
            Effect.map((exit) => (started ? Exit.isSuccess(exit) : undefined))
          )
      })

    /**
     * A group as ONE statement, without a transaction: each member runs as a unit of one statement (see
     * `OneStatement`) on one connection, its reads as they come, and once all have ended, their guards and held
     * writes all go as the parts of one statement, which commits or fails whole. So a group of creates is one
     * round trip instead of four (`BEGIN`, their claims, their writes, `COMMIT`), and each claim is written once,
     * holding its response. Anything that undoes a group in a transaction undoes this one too, and so does a
     * member that needs a transaction (its run spoiled), or a key claimed meanwhile (its guard fails the
     * statement): each member then runs again alone. Answers `undefined` when it never began (no connection).
     */
    const runStatementGroup = (members: ReadonlyArray<Member>, lock: string) =>
      Effect.scoped(
        Effect.gen(function* () {
          const reserved = yield* Effect.exit(sql.reserve)
          if (Exit.isFailure(reserved)) return undefined
          const connection = reserved.value
          // Registered for every member's level: their statements of one kind still go as one, and a nested unit
          // that fails in any of them undoes the group.
          const group: Group = { undone: false, gathers: new Map(), reads: new Map() }
          const units = members.map((member) => {
            const made = oneStatementUnit(connection, lock)
            groups.set(made.level, group)
            Deferred.doneUnsafe(
              member.start,
              Exit.succeed({ services: made.services, unit: { statement: made.unit, own: made.own } })
            )
            return { ...made, key: member.key }
          })
          const succeeded = yield* Effect.forEach(members, (member) => Deferred.await(member.finished))
          let parts = 0
          for (const { unit, own } of units) {
            own.open = false
            parts += unit.guards.length + own.writes.length
          }
          if (group.undone || units.some(({ unit }) => unit.spoiled)) {
            // These units need transactions: the next groups run as transactions.
            transactionGroupsLeft = transactionGroupsAfterSpoil
            return "undone" as const
          }
          if (succeeded.includes(false) || parts > partsPerGroupStatement) return "undone" as const
          if (parts === 0) return "committed" as const
          // The members' parts in key order, so two such statements (on two instances) that claim the same keys
          // never wait for each other crosswise.
          units.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
          // What a held write's read yields is handed on at its own unit's level (its after-commit effects are its own).
          const writes = units.flatMap(({ own, last }) =>
            own.writes.map(({ write, read }) => ({
              write,
              read:
                read === undefined
                  ? undefined
                  : {
                      query: read.query,
                      onValue: (value: unknown) =>
                        Effect.provideService(read.onValue(value), sql.transactionService, last)
                    }
            }))
          )
          const sent = yield* Effect.exit(
            oneStatement(
              units.flatMap(({ unit }) => unit.guards),
              writes
            ).pipe(Effect.provideService(sql.transactionService, [connection, 0]))
          )
          if (Exit.isSuccess(sent)) return "committed" as const
          // The database refused the statement (a guard's key claimed meanwhile, a bad row): nothing of it stays.
          if (refusedByDatabase(sent.cause)) return "undone" as const
          return { unknown: sent.cause }
        })
      )

    /** A group as one statement once the SQL client is known and no group has lately needed a transaction. */
    const runAsGroup = (members: ReadonlyArray<Member>): Effect.Effect<GroupOutcome | undefined> => {
      const lock = nestedKey
      if (lock !== undefined && transactionGroupsLeft === 0) return runStatementGroup(members, lock)
      if (transactionGroupsLeft > 0) transactionGroupsLeft--
      return Effect.map(runGroup(members), (committed) =>
        committed === undefined ? undefined : committed ? "committed" : "undone"
      )
    }

    /** Each unit runs alone, in its own fiber; done when all have ended. */
    const alone = (members: ReadonlyArray<Member>, how: "alone" | "one statement") =>
      Effect.forEach(
        members,
        (member) => Effect.andThen(Deferred.succeed(member.start, how), Deferred.await(member.finished)),
        { discard: true }
      )

    /** Groups one after another while units are waiting; gives its slot back when none are. */
    const drain: Effect.Effect<void> = Effect.suspend(() => {
      if (pending.length === 0) {
        inFlight--
        return Effect.void
      }
      const members = pending.splice(0, groupSize(pending.length))
      const settle =
        members.length === 1
          ? // Alone: the slot stays taken until the unit has ended.
            alone(members, "one statement")
          : Effect.flatMap(runAsGroup(members), (outcome) =>
              outcome === undefined
                ? // The group never began: each unit tries alone, and meets the failure itself.
                  alone(members, "alone")
                : Effect.forEach(members, (member) => Deferred.succeed(member.outcome, outcome), {
                    discard: true
                  })
            ).pipe(
              // Only when the layer closes (shutdown): a member is never left waiting for its group's outcome.
              Effect.onInterrupt(() =>
                Effect.forEach(
                  members,
                  (member) =>
                    Effect.andThen(Deferred.succeed(member.start, "alone"), Deferred.succeed(member.outcome, "undone")),
                  { discard: true }
                )
              )
            )
      return Effect.andThen(settle, drain)
    })

    yield* Effect.addFinalizer(() =>
      Effect.forEach(pending.splice(0), (member) => Deferred.interrupt(member.start), { discard: true })
    )

    const shared = <A, E, R>(key: string, effect: Effect.Effect<A, E, R>) =>
      Effect.uninterruptible(
        Effect.withFiber<A, E, R>((fiber) => {
          // Inside a unit already, or with a key that is waiting or running: a unit of its own (which waits at
          // its claim for the other one, as any duplicate does).
          if (Context.getOrUndefined(fiber.context, sql.transactionService) !== undefined || busy.has(key)) {
            return atomically(effect)
          }
          const member: Member = {
            key,
            start: Deferred.makeUnsafe(),
            finished: Deferred.makeUnsafe(),
            outcome: Deferred.makeUnsafe()
          }
          busy.add(key)
          pending.push(member)
          const startDrain = inFlight < maxGroupsInFlight ? (inFlight++, Effect.forkIn(drain, scope)) : Effect.void
          const run = Effect.gen(function* () {
            yield* startDrain
            const start = yield* Deferred.await(member.start)
            if (start === "alone" || start === "one statement") {
              const lock = nestedKey
              const alone =
                start === "one statement" && lock !== undefined
                  ? Effect.flatMap(asOneStatement(effect, lock), (once) => once ?? atomically(effect))
                  : atomically(effect)
              // Its slot is given back however it ends (a defect included): the next units are not kept waiting.
              return yield* Effect.ensuring(alone, Deferred.succeed(member.finished, true))
            }
            // Added to the fiber's own services: the group's transaction, or its own unit of the group's statement.
            const exit = yield* Effect.exit(withAdded(effect, start.services, start.unit?.statement))
            Deferred.doneUnsafe(member.finished, Exit.succeed(Exit.isSuccess(exit)))
            const outcome = yield* Deferred.await(member.outcome)
            // A unit of the group's statement that held nothing stands whatever became of that statement.
            const standsAlone =
              start.unit !== undefined && start.unit.statement.guards.length + start.unit.own.writes.length === 0
            if ((outcome === "committed" || standsAlone) && Exit.isSuccess(exit)) {
              if (start.unit !== undefined) yield* afterStatement(start.unit.statement, start.unit.own)
              return exit.value
            }
            // The group's statement was cut off: a unit with a guard finds what committed by its key when it runs
            // again; one without cannot tell, as after a failed COMMIT.
            if (outcome !== "undone" && outcome !== "committed" && start.unit?.statement.guards.length === 0) {
              return yield* Effect.die(Cause.squash(outcome.unknown))
            }
            // The group was undone: this unit's run left nothing behind, so it runs again, alone.
            return yield* atomically(effect)
          })
          return Effect.ensuring(
            run,
            Effect.sync(() => busy.delete(key))
          )
        })
      )

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
)
