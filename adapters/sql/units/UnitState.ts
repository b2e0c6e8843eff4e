import { Context, type Deferred, type Effect } from "effect"
import type { SqlClient, Statement } from "effect/sql"

/** A write a unit never reads back, held until the unit's end (`writeBehind`). */
export interface HeldWrite {
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
export interface HeldWrites {
  readonly writes: Array<HeldWrite>
  open: boolean
}

/**
 * A write that decides whether a unit run as one statement may commit (an idempotency claim): the statement
 * fails, and nothing of it stays, unless `write` returns a row. Until the unit ends its maker may replace
 * `write` (the claim by the claim already holding its response, say); `tag` tells its maker which it is.
 */
export interface Guard {
  write: Statement.Fragment
  readonly tag: unknown
}

/** A shared unit run as one statement, without a transaction (see units/OneStatement.ts). */
export interface OneStatement {
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

/** Statements of one kind that the members of a shared unit make at the same moment, waiting to go as one. */
export interface Gather {
  readonly items: Array<unknown>
  readonly answers: Array<Deferred.Deferred<unknown, unknown>>
}

/** The transaction (or the one statement) of a group of shared units (`Transactions.shared`). */
export interface Group {
  /** A member's nested unit failed: its savepoint could not be undone alone, so the group is undone. */
  undone: boolean
  readonly gathers: Map<symbol, Gather>
  readonly reads: Map<string, Deferred.Deferred<unknown, unknown>>
}

type Level = SqlClient.TransactionConnection.Service

/**
 * What the units of one `TransactionsSql` hold, each keyed by the SQL client's transaction level (its connection
 * and depth, one value per level), so a level begun by `withTransaction` directly, which `TransactionsSql` does
 * not end, has none: writes there run at once. Made when the layer is built.
 */
export interface UnitRegistry {
  /** The writes held at a level. */
  readonly held: WeakMap<Level, HeldWrites>
  /** The unit run as one statement whose level it is (its reads' level, and the level its statement is sent at). */
  readonly oneStatements: WeakMap<Level, OneStatement>
  /** The group whose transaction (or unit of its one statement) a level is. */
  readonly groups: WeakMap<Level, Group>
}

export const makeRegistry = (): UnitRegistry => ({
  held: new WeakMap(),
  oneStatements: new WeakMap(),
  groups: new WeakMap()
})

/**
 * Where the stores find the registry of the unit they run in: a unit adds it to its fiber's services with its
 * level. Absent outside a unit of `TransactionsSql` (a store's write then runs at once).
 */
export const Units = Context.Reference<UnitRegistry | undefined>("hitl/adapters/sql/Units", {
  defaultValue: () => undefined
})

/** The registry and the SQL client's level of `context`, when it is in a unit. */
export const unitAt = (
  sql: SqlClient.SqlClient,
  context: Context.Context<never>
): { readonly registry: UnitRegistry; readonly level: Level } | undefined => {
  const registry = Context.getOrUndefined(context, Units)
  if (registry === undefined) return undefined
  const level = Context.getOrUndefined(context, sql.transactionService)
  return level === undefined ? undefined : { registry, level }
}
