import { Cause, Context, Deferred, Effect, Exit, type Scope } from "effect"
import type { SqlClient, SqlError } from "effect/sql"
import { transactionServices, withAdded } from "./FiberServices.ts"
import type { HeldWriteStatements } from "./HeldWrites.ts"
import { type oneStatementUnits, refusedByDatabase } from "./OneStatement.ts"
import type { transactionUnits } from "./Transaction.ts"
import type { Group, HeldWrites, OneStatement, UnitRegistry } from "./UnitState.ts"

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
   * can (units/OneStatement.ts), else as `atomically`.
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

/** At most this many groups (or units alone) at once; units arriving meanwhile wait to go in the next group. */
const maxGroupsInFlight = 4

/** The group was not committed: each member runs again alone. */
class GroupUndone {
  readonly _tag = "GroupUndone"
}

/**
 * Group commit (`Transactions.shared`): units that arrive together share one transaction, or one statement
 * without a transaction, and a unit alone runs as one statement when it can. Its queue lives in `scope` (the
 * layer's): units still waiting when it closes are interrupted.
 */
export const groupCommit = Effect.fnUntraced(function* (
  sql: SqlClient.SqlClient,
  scope: Scope.Scope,
  registry: UnitRegistry,
  { flush, oneStatement }: HeldWriteStatements,
  { atLevel, unitOn, afterStatement, asOneStatement }: ReturnType<typeof oneStatementUnits>,
  { atomically, nestedKey }: ReturnType<typeof transactionUnits>
) {
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
            registry.groups.set(level, group)
            registry.held.set(level, own)
            const services = transactionServices(inside.context, outside, group, registry)
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
   * A group as ONE statement, without a transaction: each member runs as a unit of one statement on one
   * connection, its reads as they come, and once all have ended, their guards and held writes all go as the
   * parts of one statement, which commits or fails whole. So a group of creates is one round trip instead of
   * four (`BEGIN`, their claims, their writes, `COMMIT`), and each claim is written once, holding its response.
   * Anything that undoes a group in a transaction undoes this one too, and so does a member that needs a
   * transaction (its run spoiled), or a key claimed meanwhile (its guard fails the statement): each member then
   * runs again alone. Answers `undefined` when it never began (no connection).
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
          const made = unitOn(connection, lock)
          registry.groups.set(made.level, group)
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
                : { query: read.query, onValue: (value: unknown) => atLevel(read.onValue(value), last) }
          }))
        )
        const sent = yield* Effect.exit(
          atLevel(
            oneStatement(
              units.flatMap(({ unit }) => unit.guards),
              writes
            ),
            [connection, 0]
          )
        )
        if (Exit.isSuccess(sent)) return "committed" as const
        // The database refused the statement (a guard's key claimed meanwhile, a bad row): nothing of it stays.
        if (refusedByDatabase(sent.cause)) return "undone" as const
        return { unknown: sent.cause }
      })
    )

  /** A group as one statement once the SQL client is known and no group has lately needed a transaction. */
  const runAsGroup = (members: ReadonlyArray<Member>): Effect.Effect<GroupOutcome | undefined> => {
    const lock = nestedKey()
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

  /** A member's own run in its group, then the group's outcome: its result, or a run again alone. */
  const inGroup = <A, E, R>(effect: Effect.Effect<A, E, R>, member: Member, start: InGroup) =>
    Effect.gen(function* () {
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
          if (start !== "alone" && start !== "one statement") return yield* inGroup(effect, member, start)
          const lock = nestedKey()
          const alone =
            start === "one statement" && lock !== undefined
              ? Effect.flatMap(asOneStatement(effect, lock), (once) => once ?? atomically(effect))
              : atomically(effect)
          // Its slot is given back however it ends (a defect included): the next units are not kept waiting.
          return yield* Effect.ensuring(alone, Deferred.succeed(member.finished, true))
        })
        return Effect.ensuring(
          run,
          Effect.sync(() => busy.delete(key))
        )
      })
    )

  return shared
})
