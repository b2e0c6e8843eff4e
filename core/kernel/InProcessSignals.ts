import { Deferred, Effect } from "effect"

/**
 * Wake-ups inside one process, by key: one deferred per subscriber, all completed by one `wake`. `wake` is
 * immediate; a port that must wait for a commit defers it itself (`Transactions.afterCommit`). An adapter that
 * reaches other processes (LISTEN/NOTIFY) wakes its own process's waiters with these.
 */
export const makeInProcessSignals = Effect.sync(() => {
  const waiters = new Map<string, Set<Deferred.Deferred<void>>>()
  const wake = (key: string) =>
    Effect.sync(() => {
      const set = waiters.get(key)
      if (set === undefined) return
      waiters.delete(key)
      for (const deferred of set) Deferred.doneUnsafe(deferred, Effect.void)
    })
  const subscribe = (key: string) =>
    Effect.acquireRelease(
      Effect.sync(() => {
        const deferred = Deferred.makeUnsafe<void>()
        let set = waiters.get(key)
        if (set === undefined) waiters.set(key, (set = new Set()))
        set.add(deferred)
        return deferred
      }),
      (deferred) =>
        Effect.sync(() => {
          const set = waiters.get(key)
          set?.delete(deferred)
          if (set?.size === 0) waiters.delete(key)
        })
    ).pipe(Effect.map((deferred) => Deferred.await(deferred)))
  return { wake, subscribe }
})
