import { Context, type Effect } from "effect"

/** A web session: who signed in, until when. Only the hash of the cookie value is stored. */
export interface Session {
  readonly hash: string
  readonly email: string
  readonly name: string
  readonly expiresAt: string
}

/**
 * Web sessions: signing in through the hub (the platform's OpenID provider) creates one, `POST /auth/logout`
 * removes it; `GET /auth/me` and every /api/* route read them. Infrastructure failures are defects.
 */
export class SessionStore extends Context.Service<
  SessionStore,
  {
    readonly create: (session: Session) => Effect.Effect<void>
    /** The session with this hash that has not expired at `nowIso`. */
    readonly find: (hash: string, nowIso: string) => Effect.Effect<Session | undefined>
    /** Ends the session with this hash (nothing when there is none). */
    readonly remove: (hash: string) => Effect.Effect<void>
  }
>()("core/tasks/SessionStore") {}
