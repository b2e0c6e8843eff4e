import { Context, Effect, Layer } from "effect"
import { Transactions } from "../kernel/Transactions.ts"
import { DeliveryStore, type NewDelivery } from "./Deliveries.ts"
import { EventStore } from "./EventStore.ts"
import { NotificationStore, type Notification, type Settlement } from "./NotificationStore.ts"

/** What one unit of the event processor writes: its notifications, their deliveries, the events it finished. */
export interface FilingBatch {
  /** Each filed unless its event's notification was filed before (insert-if-absent on service and event id). */
  readonly notifications: ReadonlyArray<Notification>
  /**
   * The deliveries of those notifications. Only those of a notification filed now are queued; a row named by
   * several (an organization's chat channel) once, under the first of them filed now.
   */
  readonly deliveries: ReadonlyArray<NewDelivery>
  /**
   * Settlements applied to the notifications filed before this unit (a notification this unit files that one of
   * them names is planned settled already). Empty or absent: none.
   */
  readonly settlements?: ReadonlyArray<Settlement> | undefined
  /** The events marked processed at `atIso`. */
  readonly finished: ReadonlyArray<{ readonly service: string; readonly id: string }>
  readonly atIso: string
}

/** `NotificationFiling` with the three stores' own writes, in one transaction. */
export const fileWithStores =
  (stores: {
    readonly notifications: NotificationStore["Service"]
    readonly deliveries: DeliveryStore["Service"]
    readonly events: EventStore["Service"]
    readonly transactions: Transactions["Service"]
  }) =>
  (batch: FilingBatch): Effect.Effect<ReadonlyArray<Notification>> =>
    stores.transactions.atomically(
      Effect.gen(function* () {
        if (batch.settlements !== undefined && batch.settlements.length > 0) {
          yield* stores.notifications.settle(batch.settlements)
        }
        const filed = yield* stores.notifications.fileAll(batch.notifications)
        const filedIds = new Set(filed.map((n) => n.id))
        yield* stores.deliveries.enqueue(batch.deliveries.filter((d) => filedIds.has(d.notificationId)))
        yield* stores.events.finishAll(batch.finished, "processed", batch.atIso)
        return filed
      })
    )

/**
 * The event processor's writes for a batch, in one unit of work: the settlements applied, the notifications
 * filed, their deliveries queued and the events finished, all or nothing. `layer` does it with the three
 * stores in one transaction; a SQL adapter may do it in one statement (adapters/sql/hub/NotificationFilingSql.ts).
 * Answers the notifications filed now. Infrastructure failures are defects.
 */
export class NotificationFiling extends Context.Service<
  NotificationFiling,
  { readonly file: (batch: FilingBatch) => Effect.Effect<ReadonlyArray<Notification>> }
>()("core/hub/NotificationFiling") {
  static readonly layer = Layer.effect(
    NotificationFiling,
    Effect.gen(function* () {
      return NotificationFiling.of({
        file: fileWithStores({
          notifications: yield* NotificationStore,
          deliveries: yield* DeliveryStore,
          events: yield* EventStore,
          transactions: yield* Transactions
        })
      })
    })
  )
}
