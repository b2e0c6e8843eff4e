import { createCipheriv, createDecipheriv, createHash } from "node:crypto"
import { pooledRandomBytes } from "./RandomPool.ts"

/**
 * Secrets a service must use again (webhook signing secrets, upstream tokens) are kept sealed at rest:
 * AES-256-GCM under a key derived from the configured secret (SHA-256 of it, so any high-entropy string
 * works). Sealed form: `v1.<iv>.<ciphertext+tag>`, base64url. A wrong key or a tampered value opens to
 * undefined.
 */
const derive = (secret: string) => createHash("sha256").update(`hitl/secret-box/v1\u0000${secret}`).digest()

// A process has a few secrets (one per service, two while one rotates): each key is derived once, not on every
// seal and open. Bounded, should a caller ever pass many.
const keys = new Map<string, Buffer>()
const keyOf = (secret: string): Buffer => {
  let key = keys.get(secret)
  if (key === undefined) {
    if (keys.size >= 16) keys.clear()
    key = derive(secret)
    keys.set(secret, key)
  }
  return key
}

export const seal = (secret: string, plaintext: string): string => {
  const iv = pooledRandomBytes(12)
  const cipher = createCipheriv("aes-256-gcm", keyOf(secret), iv)
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()])
  return `v1.${iv.toString("base64url")}.${body.toString("base64url")}`
}

const canonical = (part: string): boolean => Buffer.from(part, "base64url").toString("base64url") === part

export const open = (secret: string, sealed: string): string | undefined => {
  const [version, iv, body] = sealed.split(".")
  if (version !== "v1" || iv === undefined || body === undefined) return undefined
  // Only the spelling `seal` writes: base64url decoding skips stray characters, so `…x` would open as `…`.
  if (!canonical(iv) || !canonical(body)) return undefined
  try {
    const bytes = Buffer.from(body, "base64url")
    if (bytes.length < 16) return undefined
    const decipher = createDecipheriv("aes-256-gcm", keyOf(secret), Buffer.from(iv, "base64url"))
    decipher.setAuthTag(bytes.subarray(bytes.length - 16))
    return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString("utf8")
  } catch {
    return undefined
  }
}
