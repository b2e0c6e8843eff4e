import { Context, Effect, Latch, Layer } from "effect"

/**
 * Wakes the event processor right after an accept, so an event is handled within milliseconds rather than
 * at the next poll. Only a hint: the processor polls anyway, so a lost wake-up (another server accepted the
 * event) costs at most one poll interval.
 */
export class EventWakeup extends Context.Service<
  EventWakeup,
  {
    readonly wake: Effect.Effect<void>
    /** Waits until woken or `millis` pass, whichever is first, then rearms. */
    readonly sleep: (millis: number) => Effect.Effect<void>
  }
>()("core/hub/EventWakeup") {
  static readonly layer = Layer.effect(
    EventWakeup,
    Effect.gen(function* () {
      const latch = yield* Latch.make(false)
      return EventWakeup.of({
        wake: Effect.asVoid(latch.open),
        sleep: (millis) => latch.await.pipe(Effect.timeoutOption(millis), Effect.andThen(latch.close), Effect.asVoid)
      })
    })
  )
}
