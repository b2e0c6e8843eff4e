import { randomFillSync } from "node:crypto"

/**
 * Random bytes from the system's cryptographic source, drawn a few kilobytes at a time and handed out in
 * slices: each slice is as unpredictable as its own call would be, without a call into the source per
 * request (request ids, the nonce of every sealed response). Every slice is a copy: a refill never changes
 * bytes already handed out, and no byte is handed out twice.
 */
export const makeRandomPool = (size = 4096) => {
  const pool = Buffer.alloc(size)
  let next = size
  return (n: number): Buffer => {
    if (n > size) return randomFillSync(Buffer.alloc(n))
    if (next + n > size) {
      randomFillSync(pool)
      next = 0
    }
    const slice = Buffer.from(pool.subarray(next, next + n))
    next += n
    return slice
  }
}

/** One pool for the process. */
export const pooledRandomBytes = makeRandomPool()
