import { Effect, Layer, Schedule } from "effect"
import { Decisions } from "../../core/decisions/Decisions.ts"

/**
 * Writes expiry of due decisions every `everyMillis` and wakes their long-polling readers. Reads never
 * depend on it (they apply expiry themselves); it makes the stored state, lists and webhooks catch up.
 */
export const ExpirySweep = (everyMillis: number) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const decisions = yield* Decisions
      yield* decisions.expireDue().pipe(
        Effect.catchCause((cause) => Effect.logWarning("expiry sweep failed; retrying", cause)),
        Effect.repeat(Schedule.spaced(everyMillis)),
        Effect.forkScoped
      )
    })
  )
