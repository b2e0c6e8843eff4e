import { Clock, Context, Effect, Layer } from "effect"
import { issueSecret, hashSecret, secretHasPrefix } from "../auth/IssuedSecret.ts"
import { IdGenerator } from "../kernel/Ids.ts"
import { isoAt } from "../kernel/Timestamp.ts"
import { Directory } from "./Directory.ts"

/**
 * A person's web session at the hub, as stored. The cookie holds an opaque secret; only its hash is kept
 * (`idHash`), so a copy of the table signs nobody in. `id` is the session's public name (logs, `CurrentPerson`).
 */
export interface SessionRecord {
  readonly id: string
  readonly idHash: string
  readonly userId: string
  readonly createdAt: string
  /** The last request seen (kept to the minute): the session ends once it is idle longer than allowed. */
  readonly lastSeenAt: string
  /** The absolute end, whatever the activity. */
  readonly expiresAt: string
}

/** The session store port. Infrastructure failures are defects. */
export class SessionStore extends Context.Service<
  SessionStore,
  {
    readonly create: (session: SessionRecord) => Effect.Effect<void>
    readonly find: (idHash: string) => Effect.Effect<SessionRecord | undefined>
    readonly touch: (idHash: string, lastSeenAt: string) => Effect.Effect<void>
    /** Ends the session; false when there was none. */
    readonly remove: (idHash: string) => Effect.Effect<boolean>
    /** Forgets sessions ended by either expiry: last seen before `idleBefore`, or past their end at `now`. */
    readonly purge: (idleBefore: string, now: string) => Effect.Effect<number>
  }
>()("core/hub/SessionStore") {}

/** Who is signed in on this request: provided by the hub's person middleware from the session cookie. */
export interface Person {
  readonly userId: string
  readonly email: string
  readonly name: string | null
  readonly sessionId: string
}

export class CurrentPerson extends Context.Service<CurrentPerson, Person>()("core/hub/CurrentPerson") {}

export interface SessionPolicy {
  /** A session not used for this long is over. */
  readonly idleMillis: number
  /** A session is over this long after sign-in, however active. */
  readonly maxMillis: number
}

export const defaultSessionPolicy: SessionPolicy = { idleMillis: 12 * 60 * 60_000, maxMillis: 7 * 24 * 60 * 60_000 }

/** A new session: the cookie value goes to the browser once and is never stored. */
export interface StartedSession {
  readonly cookieValue: string
  readonly sessionId: string
  readonly expiresAt: string
}

/** Session cookies are `hs_` then 256 random bits: anything else is refused before any lookup. */
const cookiePrefix = "hs_"

/** Last seen is written at most this often per session, so reads do not turn every request into a write. */
const touchEveryMillis = 60_000

/**
 * The hub's server-side sessions. `start` always makes a new session (a session id the browser had before
 * sign-in is never kept: no session fixation); `find` answers the person of a live session, or undefined
 * for an unknown, idle or expired one (or a user no longer in the directory); `end` forgets it.
 */
export class Sessions extends Context.Service<
  Sessions,
  {
    readonly start: (userId: string) => Effect.Effect<StartedSession>
    readonly find: (cookieValue: string) => Effect.Effect<Person | undefined>
    readonly end: (cookieValue: string) => Effect.Effect<void>
    /** Forgets every ended session (a housekeeping worker calls it). */
    readonly purge: Effect.Effect<number>
  }
>()("core/hub/Sessions") {
  static readonly layer = (
    policy: SessionPolicy = defaultSessionPolicy
  ): Layer.Layer<Sessions, never, SessionStore | Directory | IdGenerator> =>
    Layer.effect(
      Sessions,
      Effect.gen(function* () {
        const store = yield* SessionStore
        const directory = yield* Directory
        const ids = yield* IdGenerator
        const hashOf = (cookieValue: string) =>
          secretHasPrefix(cookieValue, cookiePrefix) ? hashSecret(cookieValue) : undefined
        return Sessions.of({
          start: Effect.fn("Sessions.start")(function* (userId: string) {
            const now = yield* Clock.currentTimeMillis
            const secret = issueSecret(cookiePrefix)
            const record: SessionRecord = {
              id: yield* ids.next,
              idHash: secret.hash,
              userId,
              createdAt: isoAt(now),
              lastSeenAt: isoAt(now),
              expiresAt: isoAt(now + policy.maxMillis)
            }
            yield* store.create(record)
            return { cookieValue: secret.plaintext, sessionId: record.id, expiresAt: record.expiresAt }
          }),
          find: Effect.fn("Sessions.find")(function* (cookieValue: string) {
            const idHash = hashOf(cookieValue)
            if (idHash === undefined) return undefined
            const session = yield* store.find(idHash)
            if (session === undefined) return undefined
            const now = yield* Clock.currentTimeMillis
            const lastSeen = Date.parse(session.lastSeenAt)
            if (now >= Date.parse(session.expiresAt) || now - lastSeen >= policy.idleMillis) return undefined
            const user = yield* directory.findUserById(session.userId)
            if (user === undefined) return undefined
            if (now - lastSeen >= touchEveryMillis) yield* store.touch(idHash, isoAt(now))
            return { userId: user.id, email: user.email, name: user.name, sessionId: session.id }
          }),
          end: Effect.fn("Sessions.end")(function* (cookieValue: string) {
            const idHash = hashOf(cookieValue)
            if (idHash !== undefined) yield* store.remove(idHash)
          }),
          purge: Effect.gen(function* () {
            const now = yield* Clock.currentTimeMillis
            return yield* store.purge(isoAt(now - policy.idleMillis), isoAt(now))
          })
        })
      })
    )
}
