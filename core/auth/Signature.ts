import { createHmac, timingSafeEqual } from "node:crypto"
import { Hub } from "../kernel/Limits.ts"

/**
 * The platform's HMAC signature, shared by three planes (document 1, "Authentication"; document 2,
 * "Events"): AUTH-2 signs `<timestamp>.<raw body>`, AUTH-6 `<timestamp>.<raw query string>`, and the
 * decisions webhooks `<X-Decisions-Timestamp>.<raw body>`. The header value is `v1=<hex HMAC-SHA256>`.
 */
export type Payload = string | Uint8Array

const digest = (secret: string, timestamp: string, payload: Payload): Buffer =>
  createHmac("sha256", secret).update(`${timestamp}.`).update(payload).digest()

export const sign = (input: {
  readonly secret: string
  readonly timestamp: number
  readonly payload: Payload
}): string => `v1=${digest(input.secret, String(input.timestamp), input.payload).toString("hex")}`

const candidate = /^v1=([0-9a-f]{64})$/

/**
 * True only for a well-formed signature by `secret` over `<timestamp>.<payload>`, with the timestamp (unix
 * seconds) within `skewSeconds` of now in either direction. Every failure is the same `false`: a caller
 * learns nothing about which part was wrong. A header may carry several signatures (key rotation),
 * separated by spaces or commas; one match is enough. The comparison is constant-time.
 */
export const verify = (input: {
  readonly secret: string | undefined
  readonly timestamp: string | undefined | null
  readonly signature: string | undefined | null
  readonly payload: Payload
  readonly nowSeconds: number
  readonly skewSeconds?: number
}): boolean => {
  const { secret, timestamp, signature } = input
  if (secret === undefined || secret.length === 0) return false
  if (typeof timestamp !== "string" || !/^\d{1,12}$/.test(timestamp)) return false
  if (typeof signature !== "string" || signature.length > 1024) return false
  if (Math.abs(input.nowSeconds - Number(timestamp)) > (input.skewSeconds ?? Hub.timestampSkewSeconds)) return false
  const expected = digest(secret, timestamp, input.payload)
  let matched = false
  for (const part of signature.split(/[\s,]+/)) {
    const hex = candidate.exec(part)?.[1]
    // Every candidate is compared in full, so the time taken does not depend on where a match is.
    if (hex !== undefined && timingSafeEqual(Buffer.from(hex, "hex"), expected)) matched = true
  }
  return matched
}
