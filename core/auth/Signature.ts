import { createHmac, timingSafeEqual } from "node:crypto"
import { Hub } from "../kernel/Limits.ts"

/**
 * The platform's HMAC signature, shared by three planes (the platform contract, "Authentication"; the decisions contract,
 * "Events"): AUTH-2 signs `<timestamp>.<raw body>`, AUTH-6 `<timestamp>.<raw query string>`, and the
 * decisions webhooks `<X-Decisions-Timestamp>.<raw body>`. The header value is `v1=<hex HMAC-SHA256>`,
 * the timestamp unix seconds. The payload is signed as the raw bytes received (a string as UTF-8).
 */
export type Payload = string | Uint8Array

const digest = (secret: string, timestamp: string, payload: Payload): Buffer =>
  createHmac("sha256", secret).update(`${timestamp}.`).update(payload).digest()

/** The header value `v1=<lowercase hex>` for `<timestamp>.<payload>`. */
export const sign = (input: {
  readonly secret: string
  readonly timestamp: number
  readonly payload: Payload
}): string => `v1=${digest(input.secret, String(input.timestamp), input.payload).toString("hex")}`

// What we emit, exactly: the scheme and 64 lowercase hex digits. Anything else is not a candidate.
const candidate = /^v1=([0-9a-f]{64})$/
// Unix seconds as digits only: no sign, no fraction, no spaces, no exponent.
const unixSeconds = /^\d{1,12}$/
// Enough for a handful of rotated keys; a longer header is refused before any work.
const maxHeaderLength = 1024

/**
 * True only for a well-formed signature by `secret` over `<timestamp>.<payload>`, with the timestamp (unix
 * seconds, the header exactly as received) within `skewSeconds` (default 300) of
 * `nowSeconds` in either direction. Every failure is the same `false`, so a caller learns nothing about
 * which part was wrong. A header may carry several signatures separated by spaces or commas (key
 * rotation); one match is enough, and every candidate is compared in full, in constant time.
 */
export const verify = (input: {
  readonly secret: string | undefined
  readonly timestamp: string | undefined | null
  readonly signature: string | undefined | null
  readonly payload: Payload
  readonly nowSeconds: number
  readonly skewSeconds?: number | undefined
}): boolean => {
  const { secret, timestamp, signature } = input
  if (secret === undefined || secret.length === 0) return false
  if (typeof timestamp !== "string" || !unixSeconds.test(timestamp)) return false
  if (typeof signature !== "string" || signature.length > maxHeaderLength) return false
  const skew = input.skewSeconds ?? Hub.timestampSkewSeconds
  // Written as "not within" so that a NaN clock or skew refuses instead of passing.
  if (!(Math.abs(input.nowSeconds - Number(timestamp)) <= skew)) return false
  const expected = digest(secret, timestamp, input.payload)
  let matched = false
  for (const part of signature.split(/[\s,]+/)) {
    const hex = candidate.exec(part)?.[1]
    if (hex !== undefined && timingSafeEqual(Buffer.from(hex, "hex"), expected)) matched = true
  }
  return matched
}
