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

/**
 * Random bytes for ULIDs, drawn from the system's cryptographic source a few thousand at a time: the ulid
 * package asks for one byte per character otherwise, sixteen system calls for every id.
 */
const pooledRandom = () => {
  const pool = new Uint8Array(4096)
  let next = pool.length
  return () => {
    if (next === pool.length) {
      globalThis.crypto.getRandomValues(pool)
      next = 0
    }
    // As the ulid package's own source does: one byte, scaled to [0, 1).
    return pool[next++]! / 256
  }
}

/** ULIDs from the effect Clock, monotonic within one millisecond. */
export const IdGeneratorUlid = Layer.sync(IdGenerator, () => {
  const make = monotonicFactory(pooledRandom())
  return IdGenerator.of({ next: Effect.map(Clock.currentTimeMillis, (now) => make(now)) })
})
