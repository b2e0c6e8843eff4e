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
  /**
   * Answer and keep inside units of work too (default: a unit always reads). For lookups on a unit's hot
   * path, such as a decision's role on every create. A unit that announced a change of a credential reads
   * that credential itself until the change is heard (see makeCredentialCache).
   */
  readonly inUnits?: boolean | undefined
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
 *
 * With `inUnits`, units use the cache as well. Units run at read committed, so what a unit reads is what
 * was committed when it read, as outside a unit, except for the changes the unit made itself. Those are
 * known: `changed` marks the credential for the unit's connection, and while the mark stands, lookups on
 * that connection neither answer the credential from the cache nor keep what they read of it. The mark
 * goes when the change is heard (the unit committed; the connection may serve other units then). A unit
 * that rolled back leaves its mark until the credential's next change: its connection reads that
 * credential meanwhile, which costs a read and is never stale. At most `capacity` marks are kept, the
 * oldest (long since ended) dropped first.
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
    // With `inUnits`: the connections of the units that changed a credential, until the change is heard.
    const marks = new Map<string, Set<object>>()
    const marked = (context: Context.Context<never>, id: string) => {
      const level = Context.getOrUndefined(context, sql.transactionService)
      return level !== undefined && marks.get(id)?.has(level[0]) === true
    }

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
        marks.delete(id)
        const key = keyOfId.get(id)
        if (key !== undefined) drop(key)
      },
      reset: () => {
        generation++
        // A unit still open keeps its mark: the feed going down says nothing of its changes.
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
          if (!notices.live()) return load
          if (!options.inUnits && Context.getOption(context, sql.transactionService)._tag === "Some") return load
          const hit = entries.get(key)
          if (hit !== undefined && !(options.inUnits && marked(context, options.idOf(hit)))) {
            entries.delete(key)
            entries.set(key, hit)
            return Effect.succeed(hit)
          }
          const before = generation
          return Effect.map(load, (loaded) => {
            if (
              loaded !== undefined &&
              notices.live() &&
              generation === before &&
              !(options.inUnits && marked(context, options.idOf(loaded)))
            )
              keep(key, loaded)
            return loaded
          })
        }),
      changed: (id) =>
        options.inUnits
          ? Effect.andThen(
              Effect.contextWith((context: Context.Context<never>) => {
                const level = Context.getOrUndefined(context, sql.transactionService)
                if (level !== undefined) {
                  let connections = marks.get(id)
                  if (connections === undefined) {
                    marks.set(id, (connections = new Set()))
                    if (marks.size > capacity) marks.delete(marks.keys().next().value!)
                  }
                  connections.add(level[0])
                }
                return Effect.void
              }),
              notices.announce(options.scope, id)
            )
          : notices.announce(options.scope, id)
    }
  })
