import { Effect } from "effect"
import { ProducerOutbox } from "../events/ProducerOutbox.ts"
import { Transactions } from "../kernel/Transactions.ts"
import type { Decision } from "./Decision.ts"
import { makeDecisionAnnouncements } from "./DecisionNotifications.ts"
import { DecisionStore } from "./DecisionStore.ts"
import type { RoleWithHolders } from "./RoleStore.ts"
import type { WebhookDelivery } from "./WebhookOutbox.ts"

/**
 * The one path by which the decisions use cases write a decision: the record, its webhook deliveries and the
 * notifications the change announces (DecisionNotifications.ts) go to the store and the outboxes in one unit of
 * work, so the hub and the webhook endpoints hear of a change exactly when it is stored.
 *
 * Each write joins the unit it runs in (`Transactions.join`): inside a request's unit (its idempotency record,
 * its kept response) it adds no savepoint; outside one it is a unit of its own. Nothing in it fails but by a
 * defect, which undoes the whole unit.
 */
export const makeDecisionWrites = Effect.gen(function* () {
  const transactions = yield* Transactions
  const store = yield* DecisionStore
  const outbox = yield* ProducerOutbox
  const announce = yield* makeDecisionAnnouncements

  const enqueue = (before: Decision | undefined, after: Decision, known?: RoleWithHolders) =>
    Effect.flatMap(announce(before, after, known), (events) =>
      Effect.forEach(events, outbox.enqueue, { discard: true })
    )

  return {
    /** A new decision and what it announces. `known`: its role and holders as the create read them. */
    insert: (decision: Decision, known?: RoleWithHolders): Effect.Effect<void> =>
      transactions.join(Effect.andThen(store.insert(decision), enqueue(undefined, decision, known))),
    /**
     * `after` over `before`, only if the stored version is still `before`'s (an optimistic save), with its
     * webhook deliveries and what it announces; answers whether it applied.
     */
    save: (before: Decision, after: Decision, deliveries?: ReadonlyArray<WebhookDelivery>): Effect.Effect<boolean> =>
      transactions.join(
        Effect.gen(function* () {
          if (!(yield* store.save(after, before.version, deliveries))) return false
          yield* enqueue(before, after)
          return true
        })
      )
  }
})

export type DecisionWrites = Effect.Success<typeof makeDecisionWrites>
