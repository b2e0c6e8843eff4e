import { assert, describe, it } from "@effect/vitest"
import { createHash } from "node:crypto"
import {
  displayPrefixLength,
  hashSecret,
  issueSecret,
  secretHasPrefix,
  verifySecret
} from "../../core/auth/IssuedSecret.ts"

describe("issued secrets", () => {
  it("carry the prefix and 32 random bytes in base64url, with a 12-character display prefix", () => {
    for (const prefix of ["dcd_", "sk_live_", ""]) {
      const secret = issueSecret(prefix)
      assert.isTrue(secret.plaintext.startsWith(prefix))
      assert.match(secret.plaintext.slice(prefix.length), /^[A-Za-z0-9_-]{43}$/)
      assert.strictEqual(Buffer.from(secret.plaintext.slice(prefix.length), "base64url").length, 32)
      assert.strictEqual(displayPrefixLength, 12)
      assert.strictEqual(secret.displayPrefix, secret.plaintext.slice(0, 12))
      assert.lengthOf(secret.displayPrefix, 12)
    }
  })

  it("are stored as the hex SHA-256 of the plaintext, which holds nothing of the secret", () => {
    const secret = issueSecret("dcd_")
    const expected = createHash("sha256").update(secret.plaintext).digest("hex")
    assert.strictEqual(secret.hash, expected)
    assert.strictEqual(hashSecret(secret.plaintext), expected)
    assert.notInclude(secret.hash, secret.plaintext.slice(4, 12))
  })

  it("use the randomness they are given, exactly", () => {
    const bytes = Uint8Array.from({ length: 32 }, (_, i) => i)
    const secret = issueSecret("dcd_", () => bytes)
    assert.strictEqual(secret.plaintext, `dcd_${Buffer.from(bytes).toString("base64url")}`)
    assert.throws(() => issueSecret("dcd_", () => new Uint8Array(16)))
  })

  it("two issues differ", () => {
    const issued = Array.from({ length: 100 }, () => issueSecret("dcd_").plaintext)
    assert.strictEqual(new Set(issued).size, issued.length)
  })

  it("verify true for themselves and false for any other", () => {
    const a = issueSecret("dcd_")
    const b = issueSecret("dcd_")
    assert.isTrue(verifySecret(a.plaintext, a.hash))
    assert.isTrue(verifySecret(b.plaintext, b.hash))
    assert.isFalse(verifySecret(b.plaintext, a.hash))
    assert.isFalse(verifySecret(a.plaintext, b.hash))
    assert.isFalse(verifySecret(a.plaintext.slice(0, -1), a.hash))
    assert.isFalse(verifySecret(`${a.plaintext}x`, a.hash))
    assert.isFalse(verifySecret(a.plaintext.toUpperCase(), a.hash))
    assert.isFalse(verifySecret("", a.hash))
  })

  it("verify refuses a stored hash that is not 64 lowercase hex digits", () => {
    const a = issueSecret("dcd_")
    for (const hash of ["", "00", a.hash.slice(1), `${a.hash}0`, `${a.hash}zz`, a.hash.toUpperCase(), ` ${a.hash}`]) {
      assert.isFalse(verifySecret(a.plaintext, hash), hash)
    }
  })

  it("secretHasPrefix tells the shape of an issued secret from junk", () => {
    const a = issueSecret("dcd_")
    assert.isTrue(secretHasPrefix(a.plaintext, "dcd_"))
    assert.isFalse(secretHasPrefix(a.plaintext, "sk_"))
    assert.isFalse(secretHasPrefix("dcd_", "dcd_"))
    assert.isFalse(secretHasPrefix(`${a.plaintext}x`, "dcd_"))
    assert.isFalse(secretHasPrefix(a.plaintext.slice(0, -1), "dcd_"))
    assert.isFalse(secretHasPrefix(`dcd_${"+".repeat(43)}`, "dcd_"))
    assert.isFalse(secretHasPrefix(a.plaintext.slice(4), "dcd_"))
  })
})
