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

const encoder = new TextEncoder()

/** Mints an AUTH-4 token: HS256, `iss`, `aud` (the service id), `sub` (the normalised email), `exp - iat <= 300`. */
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
  const lifetime = Math.min(input.lifetimeSeconds ?? Hub.identityTokenLifetimeSeconds, Hub.identityTokenLifetimeSeconds)
  const claims: Record<string, string> = {}
  if (input.companyId !== undefined) claims["companyId"] = input.companyId
  if (input.orgRole !== undefined) claims["orgRole"] = input.orgRole
  if (input.tier !== undefined) claims["tier"] = input.tier
  return Effect.promise(() =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setIssuer(input.issuer)
      .setAudience(input.audience)
      .setSubject(normalizeEmail(input.subject))
      .setIssuedAt(input.nowSeconds)
      .setExpirationTime(input.nowSeconds + lifetime)
      .sign(encoder.encode(input.key))
  )
}

/**
 * A compact JWS of three canonical base64url segments. jose decodes leniently, so a token whose last
 * character differs only in unused bits would verify; a mutated token is refused here instead.
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

const optionalString = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)

/**
 * Verifies an AUTH-4 token (document 1, "Authentication"): HS256 only (`none`, other HMAC sizes and every
 * asymmetric algorithm are refused), no `crit` extension, the issuer and audience checked, not expired at
 * `nowSeconds` (no tolerance), `iat` and `exp` present with `0 < exp - iat <= 300`, `sub` an email.
 * The signature is compared in constant time by jose. Every failure is the same Unauthorized.
 */
export const verify = (input: {
  readonly token: string
  readonly key: string
  readonly issuer: string
  readonly audience: string
  readonly nowSeconds: number
}): Effect.Effect<VerifiedIdentity, Unauthorized> =>
  Effect.tryPromise({
    try: async () => {
      if (input.key.length === 0 || input.token.length > 8192 || !isCanonical(input.token)) throw new Error("refused")
      const header = decodeProtectedHeader(input.token)
      if (header.alg !== "HS256" || header.crit !== undefined) throw new Error("refused")
      const { payload } = await jwtVerify(input.token, encoder.encode(input.key), {
        algorithms: ["HS256"],
        issuer: input.issuer,
        audience: input.audience,
        currentDate: new Date(input.nowSeconds * 1000),
        clockTolerance: 0,
        requiredClaims: ["iat", "exp", "sub"]
      })
      const { iat, exp, sub } = payload
      if (typeof iat !== "number" || typeof exp !== "number" || typeof sub !== "string") throw new Error("refused")
      if (exp <= iat || exp - iat > Hub.identityTokenLifetimeSeconds) throw new Error("refused")
      const email = normalizeEmail(sub)
      if (!isEmail(email)) throw new Error("refused")
      return {
        email,
        companyId: optionalString(payload["companyId"]),
        orgRole: optionalString(payload["orgRole"]),
        tier: optionalString(payload["tier"]),
        issuedAt: iat,
        expiresAt: exp
      } satisfies VerifiedIdentity
    },
    catch: () => new Unauthorized({})
  })
