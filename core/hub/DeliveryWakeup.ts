import { Context, Layer } from "effect"
import { makeWakeup, type Wakeup } from "./EventWakeup.ts"

/**
 * Wakes the channels' sender (NotificationDeliveries) once the event processor has committed a delivery due
 * at once, so a chat message, a push or an immediate email leaves within milliseconds rather than at the next
 * poll. A delivery due later (a digest's email) wakes nobody: the poll finds it when its time comes. Only a
 * hint, as EventWakeup: the sender polls anyway.
 */
export class DeliveryWakeup extends Context.Service<DeliveryWakeup, Wakeup>()("core/hub/DeliveryWakeup") {
  static readonly layer = Layer.effect(DeliveryWakeup, makeWakeup)
}
