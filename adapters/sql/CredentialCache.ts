import { Context, Effect, type Scope } from "effect"
import { SqlClient } from "effect/sql"
import { CredentialNotices } from "./CredentialNotices.ts"

export interface CredentialCache<A> {
  /** The cached answer for `key`, else what `load` answers (kept when it is a credential). */
  readonly get: <E, R>(key: string, load: Effect.Effect<A | undefined, E, R>) => Effect.Effect<A | undefined, E, R>
  /** Inside the writer's unit of work: the credential `id` changed (rotated, revoked, suspended...). */
  readonly changed: (id: string) => Effect.Effect<void>
}

export interface CredentialCacheOptions<A> {
  /** The kind of credential, unique per table: `decisions.caller_keys`. */
  readonly scope: string
  /** The credential an answer belongs to: what `changed` names. */
  readonly idOf: (value: A) => string
  /** At most this many answers are kept; the least recently used goes first. Default 10,000. */
  readonly capacity?: number | undefined
}

/**
 * A per-instance cache of credential lookups (key → what it identifies) that is never stale for a change:
 * an entry is dropped when CredentialNotices reports its credential changed, and nothing is answered from
 * the cache while notices may be missed (`live` false). Only found credentials are kept, and at most
 * `capacity` of them, so a flood of unknown keys costs reads but no memory.
 *
 * A lookup that raced a change (a notice arrived while it was reading) answers what it read but is not
 * kept: what it read may be the state before the change. Inside a transaction the cache is not used, so a
 * unit of work sees its own changes.
 */
export const makeCredentialCache = <A>(
  options: CredentialCacheOptions<A>
): Effect.Effect<CredentialCache<A>, never, CredentialNotices | SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function* () {
    const notices = yield* CredentialNotices
    const sql = yield* SqlClient.SqlClient
    const capacity = options.capacity ?? 10_000
    // Insertion order is recency: a hit moves its entry to the end, the first entry is the oldest.
    const entries = new Map<string, A>()
    const keyOfId = new Map<string, string>()
    let generation = 0

    const drop = (key: string) => {
      const value = entries.get(key)
      if (value === undefined) return
      entries.delete(key)
      const id = options.idOf(value)
      if (keyOfId.get(id) === key) keyOfId.delete(id)
    }

    yield* notices.listen(options.scope, {
      changed: (id) => {
        generation++
        const key = keyOfId.get(id)
        if (key !== undefined) drop(key)
      },
      reset: () => {
        generation++
        entries.clear()
        keyOfId.clear()
      }
    })

    const keep = (key: string, value: A) => {
      const id = options.idOf(value)
      const previous = keyOfId.get(id)
      if (previous !== undefined && previous !== key) drop(previous)
      entries.set(key, value)
      keyOfId.set(id, key)
      if (entries.size > capacity) drop(entries.keys().next().value!)
    }

    return {
      // Every delivery and every keyed call asks: a hit answers without a step more than it needs.
      get: <E, R>(key: string, load: Effect.Effect<A | undefined, E, R>) =>
        Effect.contextWith((context: Context.Context<never>) => {
          if (!notices.live() || Context.getOption(context, sql.transactionService)._tag === "Some") return load
          const hit = entries.get(key)
          if (hit !== undefined) {
            entries.delete(key)
            entries.set(key, hit)
            return Effect.succeed(hit)
          }
          const before = generation
          return Effect.map(load, (loaded) => {
            if (loaded !== undefined && notices.live() && generation === before) keep(key, loaded)
            return loaded
          })
        }),
      changed: (id) => notices.announce(options.scope, id)
    }
  })
