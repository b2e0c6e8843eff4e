import { Clock, Context, Effect, Layer } from "effect"
import { monotonicFactory } from "ulid"

/** Ids enter the core through this port, so tests can make them predictable (ARCHITECTURE: time and ids). */
export class IdGenerator extends Context.Service<
  IdGenerator,
  {
    /** A new ULID: 26 Crockford base-32 characters, sortable by creation time. */
    readonly next: Effect.Effect<string>
  }
>()("core/kernel/IdGenerator") {}

const ulidPattern = /^[0-9A-HJKMNP-TV-Z]{26}$/

export const isUlid = (value: string): boolean => ulidPattern.test(value)

/** ULIDs from the effect Clock, monotonic within one millisecond. */
export const IdGeneratorUlid = Layer.sync(IdGenerator, () => {
  const make = monotonicFactory()
  return IdGenerator.of({ next: Effect.map(Clock.currentTimeMillis, (now) => make(now)) })
})
