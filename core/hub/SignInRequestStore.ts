import { Context, type Effect } from "effect"

/**
 * A sign-in link someone asked for, waiting for the worker that decides whether to send it. It is written the
 * same way for any well-formed address, known or not: whose address it is is found out later, off the path of
 * the request.
 */
export interface SignInRequest {
  /** A ULID: id order is the order of asking. */
  readonly id: string
  /** The normalized address. */
  readonly email: string
  /** The root-relative path to land on, or null for `/`. */
  readonly next: string | null
  /** The hash of the asking browser's nonce (its `hub_sign_in` cookie): the link is bound to that browser. */
  readonly browserHash: string
  readonly createdAt: string
}

/** The queue of sign-in link requests. Infrastructure failures are defects. */
export class SignInRequestStore extends Context.Service<
  SignInRequestStore,
  {
    /** Adds a request in the caller's unit of work; once it commits, the workers of every instance are woken. */
    readonly add: (request: SignInRequest) => Effect.Effect<void>
    /**
     * Removes and answers the oldest request that no other unit holds, in the caller's unit of work: undone
     * with it, so a worker that dies mid-way leaves the request to be taken again, and two workers never take
     * the same one.
     */
    readonly takeOldest: () => Effect.Effect<SignInRequest | undefined>
    /** Waits until a request is added (here or, on a database server, by another instance) or `millis` pass. */
    readonly awaitAdded: (millis: number) => Effect.Effect<void>
    /** Requests not taken yet (operators, tests). */
    readonly pendingCount: () => Effect.Effect<number>
  }
>()("core/hub/SignInRequestStore") {}
