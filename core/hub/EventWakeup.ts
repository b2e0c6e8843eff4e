import { Context, Effect, Latch, Layer } from "effect"

/** A wake-up hint for one worker: `wake` ends its current or next `sleep` early. */
export interface Wakeup {
  readonly wake: Effect.Effect<void>
  /** Waits until woken or `millis` pass, whichever is first, then rearms. */
  readonly sleep: (millis: number) => Effect.Effect<void>
}

/** A Wakeup over a latch: wakes given while nobody sleeps are kept for the next sleep (one, however many). */
export const makeWakeup: Effect.Effect<Wakeup> = Effect.map(Latch.make(false), (latch) => ({
  wake: Effect.asVoid(latch.open),
  sleep: (millis) => latch.await.pipe(Effect.timeoutOption(millis), Effect.andThen(latch.close), Effect.asVoid)
}))

/**
 * Wakes the event processor right after an accept, so an event is handled within milliseconds rather than
 * at the next poll. Only a hint: the processor polls anyway, so a lost wake-up (another server accepted the
 * event) costs at most one poll interval.
 */
export class EventWakeup extends Context.Service<EventWakeup, Wakeup>()("core/hub/EventWakeup") {
  static readonly layer = Layer.effect(EventWakeup, makeWakeup)
}
