import { Layer, Random } from "effect"

/**
 * Every draw of `Random` answers `jitter` (in [0, 1)): the outboxes draw their retries' jitter from `Random`,
 * so a test that pins when a retry is due fixes it here.
 */
export const fixedJitter = (jitter: number) =>
  Layer.succeed(Random.Random, {
    nextDoubleUnsafe: () => jitter,
    nextIntUnsafe: () => Math.floor(jitter * Number.MAX_SAFE_INTEGER)
  })
