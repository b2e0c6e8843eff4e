import { PgClient } from "@effect/sql-pg"
import { Context, Deferred, Duration, Effect, Layer, Option, PubSub, Queue, Schedule, type Scope } from "effect"
import { SqlClient } from "effect/sql"
import { Database } from "./Database.ts"
import { afterUnitCommit } from "./units/OneStatement.ts"

/** The one channel every instance listens on for credential changes. */
export const credentialsChannel = "credentials_changed"

/** A credential that changed: its kind (`scope`, e.g. `decisions.caller_keys`) and its id. */
export interface CredentialNotice {
  readonly scope: string
  readonly id: string
}

/** What a cache does with notices: drop one credential, or drop everything (the feed was interrupted). */
export interface NoticeListener {
  readonly changed: (id: string) => void
  readonly reset: () => void
}

/**
 * How the credential caches of one server instance learn that a credential changed anywhere. A writer
 * calls `announce` inside the unit of work that changes the credential; every instance hears of it once
 * the change commits, never before.
 *
 * On a Postgres server, `announce` sends a NOTIFY in the writer's transaction, so Postgres delivers it
 * exactly at commit, and one connection per instance LISTENs. While that connection is not listening
 * (before it is up, or after it dropped, until it listens again) `live` is false: caches must not answer
 * then, and they are emptied whenever the feed goes down or comes back, since notices sent meanwhile are
 * lost. On the embedded database (one process) there is no listener: the change is passed in process,
 * after the commit, to every cache on the same database, and `live` is always true.
 *
 * Without a known database (a client that is not this project's Database) `live` is never true: caches
 * then read every time, which is always correct.
 */
export class CredentialNotices extends Context.Service<
  CredentialNotices,
  {
    readonly live: () => boolean
    readonly listen: (scope: string, listener: NoticeListener) => Effect.Effect<void, never, Scope.Scope>
    /** Inside the writer's unit of work: every instance hears of the change when it commits. */
    readonly announce: (scope: string, id: string) => Effect.Effect<void>
    /** Each notice once this instance has acted on it: a test's proof that a change was heard. */
    readonly heard: PubSub.PubSub<CredentialNotice>
    /** Each change of `live`, as it happens. */
    readonly liveness: PubSub.PubSub<boolean>
  }
>()("adapters/sql/CredentialNotices") {}

const reconnect = Schedule.exponential("100 millis").pipe(
  Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.seconds(5))))
)

const encode = (notice: CredentialNotice) => `${notice.scope} ${notice.id}`
const decode = (payload: string): CredentialNotice | undefined => {
  const space = payload.indexOf(" ")
  return space <= 0 ? undefined : { scope: payload.slice(0, space), id: payload.slice(space + 1) }
}

type Deliver = (notice: CredentialNotice) => void

/** The instances of this process per database client: a committed change reaches each of them in process. */
const sameDatabase = new WeakMap<object, Set<Deliver>>()

/**
 * CredentialNotices over the SqlClient the store layers already receive (Database and PgClient are read
 * when present). Memoized like any layer: the stores of one server share one listening connection.
 */
export const CredentialNoticesSql: Layer.Layer<CredentialNotices, never, SqlClient.SqlClient> = Layer.effect(
  CredentialNotices,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const database = Option.getOrUndefined(yield* Effect.serviceOption(Database))
    const pg = Option.getOrUndefined(yield* Effect.serviceOption(PgClient.PgClient))
    const heard = yield* PubSub.unbounded<CredentialNotice>()
    const liveness = yield* PubSub.unbounded<boolean>()
    const listeners = new Map<string, Set<NoticeListener>>()
    let live = database?.kind === "embedded"
    const setLive = (next: boolean) => {
      live = next
      PubSub.publishUnsafe(liveness, next)
    }

    const resetAll = () => {
      for (const set of listeners.values()) for (const listener of set) listener.reset()
    }
    const deliver: Deliver = (notice) => {
      for (const listener of listeners.get(notice.scope) ?? []) listener.changed(notice.id)
      PubSub.publishUnsafe(heard, notice)
    }

    // This instance's caches hear of its own changes in process, after the commit: at once, and on the
    // embedded database the only way. On a Postgres server the other instances hear the NOTIFY.
    let peers = sameDatabase.get(sql)
    if (peers === undefined) sameDatabase.set(sql, (peers = new Set()))
    const local = peers
    yield* Effect.acquireRelease(
      Effect.sync(() => void local.add(deliver)),
      () => Effect.sync(() => void local.delete(deliver))
    )
    const passOn = (notice: CredentialNotice) =>
      Effect.sync(() => {
        for (const peer of local) peer(notice)
      })

    if (database?.kind === "postgres" && pg !== undefined) {
      const first = yield* Deferred.make<void>()
      const session = Effect.scoped(
        Effect.gen(function* () {
          const notifications = yield* pg.listen(credentialsChannel)
          yield* Effect.addFinalizer(() =>
            Effect.sync(() => {
              setLive(false)
              resetAll()
            })
          )
          // Whatever changed while nobody listened is unknown: start empty.
          resetAll()
          setLive(true)
          yield* Deferred.succeed(first, undefined)
          while (true) {
            const notice = decode((yield* Queue.take(notifications)).payload)
            if (notice !== undefined) deliver(notice)
          }
        })
      )
      yield* session.pipe(
        Effect.tapError((error) => Effect.logWarning("credential notices stopped listening; listening again", error)),
        Effect.retry(reconnect),
        Effect.forkScoped
      )
      // Usually listening before the first request; if not, the caches read until it is.
      yield* Deferred.await(first).pipe(
        Effect.timeoutOrElse({
          duration: Duration.seconds(5),
          orElse: () => Effect.logWarning("credential notices not listening yet; credentials are read every time")
        })
      )
    }

    const notify = database?.kind === "postgres" && pg !== undefined
    return CredentialNotices.of({
      live: () => live,
      listen: (scope, listener) =>
        Effect.acquireRelease(
          Effect.sync(() => {
            let set = listeners.get(scope)
            if (set === undefined) listeners.set(scope, (set = new Set()))
            set.add(listener)
          }),
          () => Effect.sync(() => void listeners.get(scope)?.delete(listener))
        ),
      announce: (scope, id) =>
        Effect.gen(function* () {
          const notice = { scope, id }
          if (notify) yield* Effect.orDie(sql`SELECT pg_notify(${credentialsChannel}, ${encode(notice)})`)
          // After the unit's commit, whatever kind of unit: the SQL client's own would run at once in a unit
          // run as one statement, and this instance's caches would drop the credential before its change.
          yield* afterUnitCommit(sql, passOn(notice))
        }),
      heard,
      liveness
    })
  })
)
