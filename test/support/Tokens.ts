import { SignJWT } from "jose"

/** Identity tokens minted the way the hub does (AUTH-4), written here independently of core/auth. */
export const mintToken = async (options: {
  readonly key: string
  readonly issuer: string
  readonly audience: string
  readonly email: string
  readonly companyId?: string
  readonly orgRole?: string
  readonly issuedAt?: number
  readonly lifetimeSeconds?: number
}): Promise<string> => {
  const iat = options.issuedAt ?? Math.floor(Date.now() / 1000)
  const claims: Record<string, unknown> = {}
  if (options.companyId !== undefined) claims["companyId"] = options.companyId
  if (options.orgRole !== undefined) claims["orgRole"] = options.orgRole
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuer(options.issuer)
    .setAudience(options.audience)
    .setSubject(options.email)
    .setIssuedAt(iat)
    .setExpirationTime(iat + (options.lifetimeSeconds ?? 300))
    .sign(new TextEncoder().encode(options.key))
}
