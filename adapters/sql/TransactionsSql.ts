import { Context, Deferred, Effect, Exit, Layer, type Semaphore } from "effect"
import { SqlClient, SqlError, type Statement } from "effect/sql"
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

/** A unit waiting to run in a group (`Transactions.shared`). */
interface Member {
  /** The transaction's services to run in; `undefined`: run alone, as `atomically`. */
  readonly start: Deferred.Deferred<Context.Context<never> | undefined>
  /** The member's own run ended: whether it succeeded. */
  readonly finished: Deferred.Deferred<boolean>
  /** Whether the group committed. */
  readonly committed: Deferred.Deferred<boolean>
}

/** At most this many units share one transaction. */
const maxGroup = 64

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
    added.set(key, key.startsWith(nestedTransactionsKey) ? refuseNested(value, group) : value)
  }
  return Context.makeUnsafe<never>(added)
}

/** The SQL client's lock that its nested transactions (savepoints) take, by the prefix of its service's key. */
const nestedTransactionsKey = "effect/sql/SqlClient/TransactionSemaphore/"

/**
 * In a shared unit a savepoint opened on the SQL client directly (not through `atomically`) would take in its
 * neighbours' statements: opening one fails instead, before any statement, which undoes the group, and the
 * unit then runs alone, where its savepoint is its own (even if the unit caught the failure and went on).
 */
const refuseNested = (lock: Semaphore.Semaphore, group: Group): Semaphore.Semaphore =>
  Object.assign(Object.create(lock) as Semaphore.Semaphore, {
    withPermit: () =>
      Effect.suspend(() => {
        group.undone = true
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
        const group = outerLevel === undefined ? undefined : groups.get(outerLevel)
        // In a shared unit a savepoint would take in its neighbours' statements: no savepoint, and a failure
        // undoes the whole group instead (each member then runs again alone, where this is a savepoint).
        if (group !== undefined) return Effect.onError(effect, () => Effect.sync(() => void (group.undone = true)))
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
    const pending: Array<Member> = []
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
              for (const member of members) Deferred.doneUnsafe(member.start, Exit.succeed(services))
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

    /** Each unit runs alone, as `atomically`, in its own fiber; done when all have ended. */
    const alone = (members: ReadonlyArray<Member>) =>
      Effect.forEach(
        members,
        (member) => Effect.andThen(Deferred.succeed(member.start, undefined), Deferred.await(member.finished)),
        { discard: true }
      )

    /** Groups one after another while units are waiting; gives its slot back when none are. */
    const drain: Effect.Effect<void> = Effect.suspend(() => {
      if (pending.length === 0) {
        inFlight--
        return Effect.void
      }
      const members = pending.splice(0, maxGroup)
      const settle =
        members.length === 1
          ? // Alone: the slot stays taken until the unit has ended.
            alone(members)
          : Effect.flatMap(runGroup(members), (committed) =>
              committed === undefined
                ? // The transaction never began: each unit tries alone, and meets the failure itself.
                  alone(members)
                : Effect.forEach(members, (member) => Deferred.succeed(member.committed, committed), {
                    discard: true
                  })
            ).pipe(
              // Only when the layer closes (shutdown): a member is never left waiting for its group's outcome.
              Effect.onInterrupt(() =>
                Effect.forEach(
                  members,
                  (member) =>
                    Effect.andThen(
                      Deferred.succeed(member.start, undefined),
                      Deferred.succeed(member.committed, false)
                    ),
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
            start: Deferred.makeUnsafe(),
            finished: Deferred.makeUnsafe(),
            committed: Deferred.makeUnsafe()
          }
          busy.add(key)
          pending.push(member)
          const startDrain = inFlight < maxGroupsInFlight ? (inFlight++, Effect.forkIn(drain, scope)) : Effect.void
          const run = Effect.gen(function* () {
            yield* startDrain
            const services = yield* Deferred.await(member.start)
            if (services === undefined) {
              const alone = yield* Effect.exit(atomically(effect))
              Deferred.doneUnsafe(member.finished, Exit.succeed(true))
              return yield* alone
            }
            const exit = yield* Effect.exit(Effect.provideContext(effect, Context.merge(fiber.context, services)))
            Deferred.doneUnsafe(member.finished, Exit.succeed(Exit.isSuccess(exit)))
            if ((yield* Deferred.await(member.committed)) && Exit.isSuccess(exit)) return exit.value
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
      afterCommit: (effect) => sql.afterCommit(effect)
    })
  })
)
