import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { createHmac } from "node:crypto"
import { sign, verify } from "../../core/auth/Signature.ts"

const now = 1_800_000_000
const secretArb = fc.string({ minLength: 1, maxLength: 64 })
const bodyArb = fc.oneof(fc.string({ maxLength: 300 }), fc.json({ maxDepth: 2 }))
const timestampArb = fc.integer({ min: now - 300, max: now + 300 })

/** Replaces the character at `index` by a different one from `alphabet`. */
const mutateAt = (text: string, index: number, pick: number, alphabet: string) => {
  const i = index % text.length
  const choices = alphabet.replace(text[i]!, "")
  return text.slice(0, i) + choices[pick % choices.length] + text.slice(i + 1)
}

const printable = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join("")

describe("AUTH-2 / AUTH-6 / webhook signatures (property)", () => {
  it("a signature verifies for its secret, timestamp and payload", () => {
    fc.assert(
      fc.property(secretArb, bodyArb, timestampArb, (secret, payload, timestamp) => {
        const signature = sign({ secret, timestamp, payload })
        assert.isTrue(verify({ secret, timestamp: String(timestamp), signature, payload, nowSeconds: now }))
      })
    )
  })

  it("matches an HMAC computed independently", () => {
    const expected = createHmac("sha256", "s3cret").update('1800000000.{"a":1}').digest("hex")
    assert.strictEqual(sign({ secret: "s3cret", timestamp: now, payload: '{"a":1}' }), `v1=${expected}`)
    assert.strictEqual(
      sign({ secret: "s3cret", timestamp: now, payload: "email=a%40b.co&x=1" }),
      `v1=${createHmac("sha256", "s3cret").update("1800000000.email=a%40b.co&x=1").digest("hex")}`
    )
  })

  it("refuses every single-character change to the payload (body or query)", () => {
    fc.assert(
      fc.property(
        secretArb,
        fc.string({ minLength: 1, maxLength: 200 }),
        fc.nat(),
        fc.nat(),
        (secret, payload, i, c) => {
          const signature = sign({ secret, timestamp: now, payload })
          const tampered = mutateAt(payload, i, c, printable)
          assert.isFalse(verify({ secret, timestamp: String(now), signature, payload: tampered, nowSeconds: now }))
        }
      )
    )
  })

  it("refuses every single-byte change to a binary payload", () => {
    fc.assert(
      fc.property(
        secretArb,
        fc.uint8Array({ minLength: 1, maxLength: 200 }),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        (secret, payload, i, delta) => {
          const signature = sign({ secret, timestamp: now, payload })
          const tampered = Uint8Array.from(payload)
          tampered[i % tampered.length] = (tampered[i % tampered.length]! + delta) % 256
          assert.isFalse(verify({ secret, timestamp: String(now), signature, payload: tampered, nowSeconds: now }))
        }
      )
    )
  })

  it("refuses every single-character change to the timestamp and to the signature", () => {
    fc.assert(
      fc.property(secretArb, bodyArb, fc.nat(), fc.nat(), (secret, payload, i, c) => {
        const signature = sign({ secret, timestamp: now, payload })
        const timestamp = mutateAt(String(now), i, c, "0123456789")
        assert.isFalse(verify({ secret, timestamp, signature, payload, nowSeconds: Number(timestamp) }))
        const hexPart = signature.slice(3)
        const forged = `v1=${mutateAt(hexPart, i, c, "0123456789abcdef")}`
        assert.isFalse(verify({ secret, timestamp: String(now), signature: forged, payload, nowSeconds: now }))
      })
    )
  })

  it("refuses another secret", () => {
    fc.assert(
      fc.property(secretArb, secretArb, bodyArb, (secret, other, payload) => {
        fc.pre(secret !== other)
        const signature = sign({ secret: other, timestamp: now, payload })
        assert.isFalse(verify({ secret, timestamp: String(now), signature, payload, nowSeconds: now }))
      })
    )
  })

  it("accepts a timestamp 300 s away in either direction and refuses 301 s", () => {
    for (const offset of [-300, 0, 300]) {
      const signature = sign({ secret: "k", timestamp: now + offset, payload: "b" })
      assert.isTrue(verify({ secret: "k", timestamp: String(now + offset), signature, payload: "b", nowSeconds: now }))
    }
    for (const offset of [-301, 301, -100_000]) {
      const signature = sign({ secret: "k", timestamp: now + offset, payload: "b" })
      assert.isFalse(verify({ secret: "k", timestamp: String(now + offset), signature, payload: "b", nowSeconds: now }))
    }
  })

  it("refuses malformed headers and a missing secret, and accepts one good signature among several", () => {
    const good = sign({ secret: "k", timestamp: now, payload: "b" })
    const hex = good.slice(3)
    for (const signature of [
      "",
      hex,
      `v2=${hex}`,
      `v1=${hex.toUpperCase()}`,
      `v1=${hex.slice(1)}`,
      `v1=${hex}0`,
      "v1=",
      null,
      undefined
    ]) {
      assert.isFalse(
        verify({ secret: "k", timestamp: String(now), signature, payload: "b", nowSeconds: now }),
        String(signature)
      )
    }
    for (const timestamp of ["", "abc", `${now}.5`, "-1", ` ${now}`, null, undefined]) {
      assert.isFalse(
        verify({ secret: "k", timestamp, signature: good, payload: "b", nowSeconds: now }),
        String(timestamp)
      )
    }
    assert.isFalse(verify({ secret: "", timestamp: String(now), signature: good, payload: "b", nowSeconds: now }))
    assert.isFalse(
      verify({ secret: undefined, timestamp: String(now), signature: good, payload: "b", nowSeconds: now })
    )
    const rotated = `v1=${"0".repeat(64)} ${good}`
    assert.isTrue(verify({ secret: "k", timestamp: String(now), signature: rotated, payload: "b", nowSeconds: now }))
  })
})
