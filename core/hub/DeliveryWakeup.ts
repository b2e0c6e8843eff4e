import { Context, Effect, Latch, Layer } from "effect"

/**
 * Wakes the channels' sender (NotificationDeliveries) once the event processor has committed a delivery due
 * at once, so a chat message, a push or an immediate email leaves within milliseconds rather than at the next
 * poll. A delivery due later (a digest's email) wakes nobody: the poll finds it when its time comes. Only a
 * hint, as EventWakeup: the sender polls anyway.
 */
export class DeliveryWakeup extends Context.Service<
  DeliveryWakeup,
  {
    readonly wake: Effect.Effect<void>
    /** Waits until woken or `millis` pass, whichever is first, then rearms. */
    readonly sleep: (millis: number) => Effect.Effect<void>
  }
>()("core/hub/DeliveryWakeup") {
  static readonly layer = Layer.effect(
    DeliveryWakeup,
    Effect.gen(function* () {
      const latch = yield* Latch.make(false)
      return DeliveryWakeup.of({
        wake: Effect.asVoid(latch.open),
        sleep: (millis) => latch.await.pipe(Effect.timeoutOption(millis), Effect.andThen(latch.close), Effect.asVoid)
      })
    })
  )
}
