import { createHash } from "node:crypto"

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

/**
 * A ULID derived from what it names rather than drawn at random: the time part is `timeMs` (the moment of
 * the change), the 80 random bits are the first 80 bits of SHA-256 of `key`. The same change always gets
 * the same id, so an event written again for it (a replay, a retried unit of work) is one event to the
 * hub, which dedupes on the producer and the id.
 */
export const stableUlid = (timeMs: number, key: string): string => {
  let time = ""
  let t = Math.max(0, Math.min(Math.floor(timeMs), 2 ** 48 - 1))
  for (let i = 0; i < 10; i++) {
    time = crockford[t % 32]! + time
    t = Math.floor(t / 32)
  }
  const digest = createHash("sha256").update(key, "utf8").digest()
  let random = ""
  // 16 characters of 5 bits each: the first 80 bits of the digest.
  for (let i = 0; i < 16; i++) {
    const bit = i * 5
    const byte = bit >> 3
    const pair = (digest[byte]! << 8) | digest[byte + 1]!
    random += crockford[(pair >> (11 - (bit & 7))) & 31]!
  }
  return time + random
}
