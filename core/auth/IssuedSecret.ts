import { createHash, randomBytes, timingSafeEqual } from "node:crypto"

/** A secret the platform issues: caller keys (`dcd_…`), service API keys, task API keys. */
export interface IssuedSecret {
  /** Shown once, in the answer that creates or rotates it. */
  readonly plaintext: string
  /** What is stored: the hex SHA-256 of the plaintext. */
  readonly hash: string
  /** The leading characters, stored to help people tell their keys apart. */
  readonly displayPrefix: string
}

export const displayPrefixLength = 12

const randomByteLength = 32
// 32 bytes in unpadded base64url.
const randomPart = /^[A-Za-z0-9_-]{43}$/
const sha256Hex = /^[0-9a-f]{64}$/

/**
 * The hash of an issued secret. Issued secrets carry 256 bits from a CSPRNG, so a fast unsalted hash is
 * the standard choice (a slow, salted password hash protects low-entropy secrets; here it would only slow
 * every request), and it lets a presented key be found by its hash.
 */
export const hashSecret = (plaintext: string): string => createHash("sha256").update(plaintext, "utf8").digest("hex")

/**
 * A new secret: `prefix` taken as is, separator included (`"dcd_"` gives `dcd_<random>`, as the decisions contract
 * writes caller keys), then 32 bytes of CSPRNG randomness in base64url (43 characters). `random` is there
 * for tests; it must return `n` bytes.
 */
export const issueSecret = (prefix: string, random: (n: number) => Uint8Array = randomBytes): IssuedSecret => {
  const bytes = random(randomByteLength)
  if (bytes.length !== randomByteLength) throw new Error(`An issued secret needs ${randomByteLength} random bytes.`)
  const plaintext = `${prefix}${Buffer.from(bytes).toString("base64url")}`
  return { plaintext, hash: hashSecret(plaintext), displayPrefix: plaintext.slice(0, displayPrefixLength) }
}

/** True when `plaintext` hashes to `hash` (64 lowercase hex digits), compared in constant time. */
export const verifySecret = (plaintext: string, hash: string): boolean => {
  if (!sha256Hex.test(hash)) return false
  return timingSafeEqual(Buffer.from(hashSecret(plaintext), "hex"), Buffer.from(hash, "hex"))
}

/**
 * True when `presented` has the shape of a secret issued with `prefix` (the prefix, then 43 base64url
 * characters), so junk can be refused before any lookup.
 */
export const secretHasPrefix = (presented: string, prefix: string): boolean =>
  presented.startsWith(prefix) && randomPart.test(presented.slice(prefix.length))
