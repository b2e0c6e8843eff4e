import { timingSafeEqual } from "node:crypto"
import { pooledRandomBytes } from "../auth/RandomPool.ts"
import { sign } from "../auth/Signature.ts"

/**
 * What an answer link's token says: the decision (and its organization), the person it was sent to, the
 * answer it gives (`optionId`, or undefined for Decline), until when it may be used (unix seconds) and its
 * own random `nonce`, by which its one use is recorded.
 */
export interface AnswerClaims {
  readonly organizationId: string
  readonly decisionId: string
  readonly email: string
  readonly optionId: string | undefined
  readonly expiresAtSeconds: number
  readonly nonce: string
}

/** The key the tokens are signed with, derived from the service's secrets key for this use alone. */
export const answerLinkKey = (secretsKey: string): string => `hitl/answer-links/v1\u0000${secretsKey}`

/** Longer than any token `issue` makes (ids, an address of at most 254 characters, an option id of 64). */
const maxTokenLength = 2048
const nonceBytes = 16
const noncePattern = /^[A-Za-z0-9_-]{22}$/
const b64 = /^[A-Za-z0-9_-]+$/
const hex = /^[0-9a-f]{64}$/

const signatureOf = (key: string, expiresAtSeconds: number, payload: string): Buffer =>
  Buffer.from(sign({ secret: key, timestamp: expiresAtSeconds, payload }).slice("v1=".length), "hex")

/** A new random nonce: 128 bits, base64url. */
export const newNonce = (): string => pooledRandomBytes(nonceBytes).toString("base64url")

/**
 * The token for `claims`: `<base64url of the claims as JSON>.<hex HMAC-SHA256>`, signed with the platform's
 * signature (core/auth/Signature.ts) over `<expiry>.<payload>` under `key` (`answerLinkKey`).
 */
export const issueAnswerToken = (key: string, claims: AnswerClaims): string => {
  const payload = Buffer.from(
    JSON.stringify({
      o: claims.organizationId,
      d: claims.decisionId,
      e: claims.email,
      a: claims.optionId ?? null,
      x: claims.expiresAtSeconds,
      n: claims.nonce
    }),
    "utf8"
  ).toString("base64url")
  return `${payload}.${signatureOf(key, claims.expiresAtSeconds, payload).toString("hex")}`
}

const isText = (value: unknown, max: number): value is string =>
  typeof value === "string" && value.length > 0 && value.length <= max

/**
 * The claims of a token signed under `key`, whatever its expiry (the caller decides what an expired link
 * shows), or undefined for anything else: a token not made by `issueAnswerToken` under this key, altered in
 * any part, or malformed. Every failure is the same undefined; the signature is compared in constant time.
 */
export const readAnswerToken = (key: string, token: string): AnswerClaims | undefined => {
  if (token.length > maxTokenLength) return undefined
  const [payload, signature, ...rest] = token.split(".")
  if (rest.length > 0 || payload === undefined || signature === undefined) return undefined
  if (!b64.test(payload) || !hex.test(signature)) return undefined
  let fields: unknown
  try {
    fields = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"))
  } catch {
    return undefined
  }
  if (typeof fields !== "object" || fields === null || Array.isArray(fields)) return undefined
  const { o, d, e, a, x, n } = fields as Record<string, unknown>
  if (!isText(o, 128) || !isText(d, 128) || !isText(e, 254) || !isText(n, 64) || !noncePattern.test(n)) {
    return undefined
  }
  if (!(a === null || isText(a, 64))) return undefined
  if (typeof x !== "number" || !Number.isSafeInteger(x) || x < 0) return undefined
  // Only the spelling `issueAnswerToken` writes: base64url decoding skips stray characters.
  if (Buffer.from(payload, "base64url").toString("base64url") !== payload) return undefined
  if (!timingSafeEqual(signatureOf(key, x, payload), Buffer.from(signature, "hex"))) return undefined
  return { organizationId: o, decisionId: d, email: e, optionId: a ?? undefined, expiresAtSeconds: x, nonce: n }
}
