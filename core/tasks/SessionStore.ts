import { Context, type Effect } from "effect"

/** A web session: who signed in, until when. Only the hash of the cookie value is stored. */
export interface Session {
  readonly hash: string
  readonly email: string
  readonly name: string
  readonly expiresAt: string
}

/**
 * Web sessions (document 3, "Authentication" 3). Sign-in through the identity provider creates them (a later
 * issue); `GET /auth/me` and every /api/* route read them. Infrastructure failures are defects.
 */
export class SessionStore extends Context.Service<
  SessionStore,
  {
    readonly create: (session: Session) => Effect.Effect<void>
    /** The session with this hash that has not expired at `nowIso`. */
    readonly find: (hash: string, nowIso: string) => Effect.Effect<Session | undefined>
  }
>()("core/tasks/SessionStore") {}
