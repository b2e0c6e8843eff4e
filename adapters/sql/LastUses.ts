import { Duration, Effect, Schedule, Semaphore, type Scope } from "effect"
import { lastUseOf } from "../../core/kernel/LastUse.ts"

export interface LastUse {
  readonly id: string
  readonly at: string
}

export interface LastUses {
  /** Notes a use of credential `id` at `at`: memory only, no I/O. */
  readonly note: (id: string, at: string) => Effect.Effect<void>
  /** Writes the uses noted so far, in one batch. */
  readonly flush: Effect.Effect<void>
}

/**
 * Last uses written off the request path: `note` keeps the use's minute in memory (nothing when that
 * minute is already noted or written), and a fiber of the caller's scope writes what is noted every
 * `flushEvery` (default 10 s) in one batch, and once more when the scope closes. A write that fails is
 * logged and its uses noted again for the next batch; a crash loses at most the uses since the last batch,
 * which only ever makes a last use look a little older.
 */
export const makeLastUses = (
  write: (uses: ReadonlyArray<LastUse>) => Effect.Effect<void>,
  options: { readonly flushEvery?: Duration.Input | undefined } = {}
): Effect.Effect<LastUses, never, Scope.Scope> =>
  Effect.gen(function* () {
    // ISO strings of one format order as the times they name.
    let pending = new Map<string, string>()
    const written = new Map<string, string>()
    const later = (known: string | undefined, at: string) => known !== undefined && known >= at
    const semaphore = yield* Semaphore.make(1)

    const note = (id: string, at: string) =>
      Effect.sync(() => {
        const minute = lastUseOf(at)
        if (later(written.get(id), minute) || later(pending.get(id), minute)) return
        pending.set(id, minute)
      })

    const flush = Semaphore.withPermit(
      semaphore,
      Effect.suspend(() => {
        if (pending.size === 0) return Effect.void
        const batch = [...pending].map(([id, at]) => ({ id, at }))
        pending = new Map()
        return write(batch).pipe(
          Effect.andThen(
            Effect.sync(() => {
              // Only the latest uses matter; a map the size of the active keys, cleared if it ever grows past that.
              if (written.size > 100_000) written.clear()
              for (const use of batch) written.set(use.id, use.at)
            })
          ),
          Effect.catchCause((cause) =>
            Effect.andThen(
              Effect.sync(() => {
                for (const use of batch) if (!later(pending.get(use.id), use.at)) pending.set(use.id, use.at)
              }),
              Effect.logWarning("could not record when keys were last used; retrying with the next batch", cause)
            )
          )
        )
      })
    )

    yield* flush.pipe(
      Effect.repeat(Schedule.spaced(options.flushEvery ?? Duration.seconds(10))),
      Effect.interruptible,
      Effect.forkScoped
    )
    yield* Effect.addFinalizer(() => flush)
    return { note, flush }
  })
