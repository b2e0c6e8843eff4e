import { Effect } from "effect"
import { decodeProtectedHeader, jwtVerify, SignJWT } from "jose"
import { isEmail, normalizeEmail } from "../kernel/Email.ts"
import { Unauthorized } from "../kernel/Errors.ts"
import { Hub } from "../kernel/Limits.ts"

/** What a verified AUTH-4 identity token says about its subject. `tier` is advisory, never an authorization. */
export interface VerifiedIdentity {
  readonly email: string
  readonly companyId: string | undefined
  readonly orgRole: string | undefined
  readonly tier: string | undefined
  readonly issuedAt: number
  readonly expiresAt: number
}

/**
 * Clock allowances of the verifier. Expiry has none: a token is refused from its `exp` second on, exactly
 * as its issuer wrote it. `iat` may be a few seconds ahead of our clock, so a hub whose clock runs slightly
 * fast is not refused outright, while a token dated further ahead (and so alive for longer than the 300 s
 * the spec allows) is.
 */
export const expiryToleranceSeconds = 0
export const issuedInFutureToleranceSeconds = 5

// Far above any real token (a few hundred characters); refused before any decoding.
const maxTokenLength = 8192

const encoder = new TextEncoder()

/**
 * Mints an AUTH-4 token: HS256, `iss`, `aud` (the service id), `sub` (the normalised email), `iat` = now and
 * `exp - iat` = the lifetime, never more than 300 s (a longer lifetime is cut to 300). Minting only happens
 * for an identity the hub has established, so an empty key, a subject that is not an email, an empty
 * `companyId` or a lifetime under one second is a defect: no token is made that the verifier would refuse.
 */
export const mint = (input: {
  readonly key: string
  readonly issuer: string
  readonly audience: string
  readonly subject: string
  readonly companyId?: string | undefined
  readonly orgRole?: string | undefined
  readonly tier?: string | undefined
  readonly nowSeconds: number
  readonly lifetimeSeconds?: number | undefined
}): Effect.Effect<string> => {
  const subject = normalizeEmail(input.subject)
  const lifetime = Math.min(input.lifetimeSeconds ?? Hub.identityTokenLifetimeSeconds, Hub.identityTokenLifetimeSeconds)
  if (input.key.length === 0) return Effect.die(new Error("An identity token needs a signing key."))
  if (!isEmail(subject)) return Effect.die(new Error("An identity token's subject must be an email address."))
  if (input.companyId === "") return Effect.die(new Error("An identity token's companyId cannot be empty."))
  if (!Number.isSafeInteger(lifetime) || lifetime < 1) return Effect.die(new Error("Invalid token lifetime."))
  if (!Number.isFinite(input.nowSeconds)) return Effect.die(new Error("Invalid current time."))
  const iat = Math.floor(input.nowSeconds)
  const claims: Record<string, string> = {}
  if (input.companyId !== undefined) claims["companyId"] = input.companyId
  if (input.orgRole !== undefined) claims["orgRole"] = input.orgRole
  if (input.tier !== undefined) claims["tier"] = input.tier
  return Effect.promise(() =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setIssuer(input.issuer)
      .setAudience(input.audience)
      .setSubject(subject)
      .setIssuedAt(iat)
      .setExpirationTime(iat + lifetime)
      .sign(encoder.encode(input.key))
  )
}

/**
 * A compact JWS of three canonical base64url segments. jose decodes leniently, so a token whose last
 * character in a segment differs only in unused bits would decode to the same bytes and verify; such a
 * mutated token is refused here instead.
 */
const isCanonical = (token: string): boolean => {
  const segments = token.split(".")
  return (
    segments.length === 3 &&
    segments.every(
      (segment) => segment.length > 0 && Buffer.from(segment, "base64url").toString("base64url") === segment
    )
  )
}

class Refused extends Error {}

/** An optional string claim: absent is undefined, present must be a string (anything else refuses the token). */
const optionalString = (payload: Record<string, unknown>, claim: string): string | undefined => {
  const value = payload[claim]
  if (value === undefined) return undefined
  if (typeof value !== "string") throw new Refused()
  return value
}

/**
 * Verifies an AUTH-4 token: HS256 only (`none`, other HMAC sizes and every
 * asymmetric algorithm are refused, by jose's `algorithms` and by our own look at the header), no `crit`
 * extension at all, the issuer and audience checked (`aud` a string or an array holding ours), not expired
 * at `nowSeconds`, `iat` and `exp` present with `0 < exp - iat <= 300` and `iat`
 * not in the future, `sub` an email (returned normalised), `companyId` if present a non-empty string. jose
 * compares the signature in constant time. Every failure is the same Unauthorized, whatever the reason.
 */
export const verify = (input: {
  readonly token: string
  readonly key: string
  readonly issuer: string
  readonly audience: string
  readonly nowSeconds: number
}): Effect.Effect<VerifiedIdentity, Unauthorized> =>
  Effect.tryPromise({
    try: async (): Promise<VerifiedIdentity> => {
      const { token, key, nowSeconds } = input
      if (key.length === 0 || !Number.isFinite(nowSeconds)) throw new Refused()
      if (token.length > maxTokenLength || !isCanonical(token)) throw new Refused()
      const header = decodeProtectedHeader(token)
      if (header.alg !== "HS256" || header.crit !== undefined) throw new Refused()
      const { payload } = await jwtVerify(token, encoder.encode(key), {
        algorithms: ["HS256"],
        issuer: input.issuer,
        audience: input.audience,
        currentDate: new Date(nowSeconds * 1000),
        clockTolerance: expiryToleranceSeconds,
        requiredClaims: ["iat", "exp", "sub"]
      })
      const { iat, exp, sub } = payload
      if (typeof iat !== "number" || typeof exp !== "number" || typeof sub !== "string") throw new Refused()
      if (!(exp > iat && exp - iat <= Hub.identityTokenLifetimeSeconds)) throw new Refused()
      if (!(iat <= nowSeconds + issuedInFutureToleranceSeconds)) throw new Refused()
      const email = normalizeEmail(sub)
      if (!isEmail(email)) throw new Refused()
      const companyId = optionalString(payload, "companyId")
      // An empty organization scopes nothing; it is refused rather than taken as "no organization".
      if (companyId === "") throw new Refused()
      return {
        email,
        companyId,
        orgRole: optionalString(payload, "orgRole"),
        tier: optionalString(payload, "tier"),
        issuedAt: iat,
        expiresAt: exp
      }
    },
    catch: () => new Unauthorized({})
  })
