import { Context, type Effect } from "effect"

/** A browser a person registered for web push. `keys` is sealed with the hub's secrets key. */
export interface PushSubscription {
  readonly id: string
  readonly userId: string
  readonly endpoint: string
  readonly sealedKeys: string
  readonly createdAt: string
}

/** The push subscriptions port. Infrastructure failures are defects. */
export class PushSubscriptionStore extends Context.Service<
  PushSubscriptionStore,
  {
    /**
     * Keeps the subscription; an endpoint registered before (by anyone: a browser profile changed hands) is
     * replaced, keeping its id, and counts as registered now. Then, in the same transaction, the person keeps
     * only their `keepAtMost` most recently registered subscriptions: the oldest go. Answers the id kept.
     */
    readonly save: (subscription: PushSubscription, keepAtMost: number) => Effect.Effect<string>
    readonly find: (id: string) => Effect.Effect<PushSubscription | undefined>
    readonly forUser: (userId: string) => Effect.Effect<ReadonlyArray<PushSubscription>>
    /** Removes the user's subscription with that endpoint; false when the user has none. */
    readonly remove: (userId: string, endpoint: string) => Effect.Effect<boolean>
    /** Removes a subscription by id (the push service said it is gone). */
    readonly removeById: (id: string) => Effect.Effect<void>
  }
>()("core/hub/PushSubscriptionStore") {}
