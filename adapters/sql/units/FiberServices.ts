import { Context, Effect, type Semaphore } from "effect"
import * as Tracer from "effect/Tracer"
import { type Group, type OneStatement, type UnitRegistry, Units } from "./UnitState.ts"

/** The SQL client's lock that its nested transactions (savepoints) take, by the prefix of its service's key. */
const nestedTransactionsKey = "effect/sql/SqlClient/TransactionSemaphore/"

/** The key of the SQL client's lock for nested transactions in `context`, once a transaction has added it. */
export const nestedKeyIn = (context: Context.Context<never>): string | undefined => {
  for (const key of context.mapUnsafe.keys()) if (key.startsWith(nestedTransactionsKey)) return key
  return undefined
}

/**
 * In a shared unit a savepoint opened on the SQL client directly (not through `atomically`) would take in its
 * neighbours' statements: opening one fails instead, before any statement, which undoes the group, and the
 * unit then runs alone, where its savepoint is its own (even if the unit caught the failure and went on).
 */
export const refuseNested = (lock: Semaphore.Semaphore, refused: () => void): Semaphore.Semaphore =>
  Object.assign(Object.create(lock) as Semaphore.Semaphore, {
    withPermit: () =>
      Effect.suspend(() => {
        refused()
        return Effect.die(new Error("a shared unit opened a transaction of its own"))
      })
  })

/**
 * The services a group's transaction adds to its fiber's (the connection, the after-commit buffer and the
 * like, and the registry of its units), without its span: a member's statements stay in its own request's trace.
 */
export const transactionServices = (
  inside: Context.Context<never>,
  outside: Context.Context<never>,
  group: Group,
  registry: UnitRegistry
) => {
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
  added.set(Units.key, registry)
  return added
}

/**
 * `effect` with `services` (by key) added to its fiber's own. Added one by one, each is a layer over the
 * fiber's services; `Effect.provideContext` would merge instead, copying every service of the request (twice
 * when services were added since its last copy), for each unit.
 */
export const withAdded = <A, E, R>(
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
