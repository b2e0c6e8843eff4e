import { Deferred, Effect, Exit } from "effect"
import type { SqlClient } from "effect/sql"
import { type Gather, type Group, unitAt } from "./UnitState.ts"

const groupOf = (sql: SqlClient.SqlClient, context: Parameters<typeof unitAt>[1]): Group | undefined => {
  const at = unitAt(sql, context)
  return at === undefined ? undefined : at.registry.groups.get(at.level)
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
