import { Context, type Effect } from "effect"

/** What a sign-in link is for: an emailed link the person asked for, or a viewer link a service asked for. */
export const SignInPurposes = ["email", "viewer"] as const
export type SignInPurpose = (typeof SignInPurposes)[number]

/** A sign-in link's secret as stored: only its hash. */
export interface SignInToken {
  readonly tokenHash: string
  readonly userId: string
  readonly purpose: SignInPurpose
  /** The root-relative path the person lands on; null lands on `/`. */
  readonly next: string | null
  readonly createdAt: string
  readonly expiresAt: string
  /**
   * For an emailed link, the hash of the nonce held by the browser that asked for it (its `hub_sign_in`
   * cookie): opened there the link signs in at once, anywhere else it asks first. Null for a viewer link.
   */
  readonly browserHash: string | null
}

/** The sign-in link port. Infrastructure failures are defects. */
export class SignInTokenStore extends Context.Service<
  SignInTokenStore,
  {
    readonly insert: (token: SignInToken) => Effect.Effect<void>
    /** The token when it exists, is unused and has not expired at `now`, without spending it; else undefined. */
    readonly find: (tokenHash: string, now: string) => Effect.Effect<SignInToken | undefined>
    /**
     * How many tokens of that purpose the user was given since `since`, used or not. In a unit of work it holds
     * the user's links until the unit ends, so two units never both count below a cap and both add one.
     */
    readonly countIssuedSince: (userId: string, purpose: SignInPurpose, since: string) => Effect.Effect<number>
    /**
     * Redeems the token in one step: marks it used at `now` and answers it, when it exists, is unused and
     * has not expired at `now`; otherwise undefined. Of two requests with the same token only one gets it.
     */
    readonly redeem: (tokenHash: string, now: string) => Effect.Effect<SignInToken | undefined>
    /** Ends every unused token of the user for that purpose (a newer link replaces them); answers how many. */
    readonly revokeUnused: (userId: string, purpose: SignInPurpose, now: string) => Effect.Effect<number>
    /** Forgets tokens that expired before `before`, used or not. */
    readonly purge: (before: string) => Effect.Effect<number>
  }
>()("core/hub/SignInTokenStore") {}

/** A directory user the meeting-recaps service invited to view recordings (an external viewer). */
export interface ExternalViewer {
  readonly userId: string
  readonly invitedByEmail: string
  readonly createdAt: string
}

/** Which directory users are external viewers. Infrastructure failures are defects. */
export class ExternalViewerStore extends Context.Service<
  ExternalViewerStore,
  {
    /** Records the user as an external viewer once; false when it was one already. */
    readonly add: (viewer: ExternalViewer) => Effect.Effect<boolean>
    readonly find: (userId: string) => Effect.Effect<ExternalViewer | undefined>
  }
>()("core/hub/ExternalViewerStore") {}
