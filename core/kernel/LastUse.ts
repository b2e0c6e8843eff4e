import { epochMs, isoAt } from "./Timestamp.ts"

/**
 * When a credential was last used is kept to the minute: a request only notes the use, and at most one
 * write per key and minute records it, in the background. A finer time would cost a write per request.
 */
export const lastUseResolutionMs = 60_000

/** The recorded last use for a use at `at`: the start of its minute. */
export const lastUseOf = (at: string): string =>
  isoAt(Math.floor(epochMs(at) / lastUseResolutionMs) * lastUseResolutionMs)

/** The later of two recorded uses: a last use never moves back. */
export const laterUse = (a: string | undefined | null, b: string): string =>
  a === undefined || a === null || epochMs(a) < epochMs(b) ? b : a
