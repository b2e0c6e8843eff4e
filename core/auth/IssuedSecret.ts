import { createHash, randomBytes, timingSafeEqual } from "node:crypto"

export interface IssuedSecret {
  /** Shown once, in the answer that creates or rotates it. */
  readonly plaintext: string
  /** What is stored. */
  readonly hash: string
  /** The leading characters, stored to help people tell their keys apart. */
  readonly displayPrefix: string
}

export const displayPrefixLength = 12

/**
 * The hash of an issued secret. Issued secrets carry 256 bits from a CSPRNG, so a fast unsalted hash is
 * the standard choice (a slow password hash protects low-entropy secrets; it would only slow every
 * request here), and it lets a presented key be found by its hash.
 */
export const hashSecret = (plaintext: string): string => createHash("sha256").update(plaintext, "utf8").digest("hex")

/** A new secret: `prefix` (e.g. `dcd_`) plus 32 random bytes in base64url. */
export const issueSecret = (prefix: string): IssuedSecret => {
  const plaintext = `${prefix}${randomBytes(32).toString("base64url")}`
  return { plaintext, hash: hashSecret(plaintext), displayPrefix: plaintext.slice(0, displayPrefixLength) }
}

export const verifySecret = (plaintext: string, hash: string): boolean => {
  const presented = Buffer.from(hashSecret(plaintext), "hex")
  const stored = Buffer.from(hash, "hex")
  return stored.length === presented.length && timingSafeEqual(presented, stored)
}
