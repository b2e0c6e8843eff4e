import { Effect } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import { NotConfigured, Unauthorized } from "../kernel/Errors.ts"

const sha256 = (value: string) => createHash("sha256").update(value, "utf8").digest()

/** Constant-time equality of two strings of any lengths: both are hashed first, so length leaks nothing. */
export const constantTimeEqual = (a: string, b: string): boolean => timingSafeEqual(sha256(a), sha256(b))

/**
 * AUTH-1, a static transport key (the platform contract, "Authentication": "Fail-closed: production answers 503 when
 * the key is unset"). An unset or empty key is `NotConfigured` in production (the HTTP layer answers 503)
 * and `Unauthorized` elsewhere: outside production a missing key is a local setup, not an outage, but the
 * route still never opens. A missing or empty presented key is `Unauthorized`.
 */
export const checkStaticKey = (input: {
  readonly expected: string | undefined
  readonly presented: string | undefined | null
  readonly production: boolean
}): Effect.Effect<void, Unauthorized | NotConfigured> => {
  if (input.expected === undefined || input.expected.length === 0) {
    return Effect.fail(input.production ? new NotConfigured({}) : new Unauthorized({}))
  }
  const presented = input.presented ?? ""
  return presented.length > 0 && constantTimeEqual(presented, input.expected)
    ? Effect.void
    : Effect.fail(new Unauthorized({}))
}
