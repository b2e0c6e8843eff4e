import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { createHmac } from "node:crypto"
import { sign, verify, type Payload } from "../../core/auth/Signature.ts"

const now = 1_800_000_000
const hexDigits = "0123456789abcdef"
const encoder = new TextEncoder()

const secretArb = fc.oneof(
  fc.string({ minLength: 1, maxLength: 64 }),
  fc.string({ minLength: 1, maxLength: 64, unit: "binary" }),
  fc.base64String({ minLength: 4, maxLength: 64 })
)
const bodyArb: fc.Arbitrary<Payload> = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc.string({ maxLength: 100, unit: "binary" }),
  fc.json({ maxDepth: 2 }),
  fc.uint8Array({ maxLength: 300 })
)
const queryArb = fc.webQueryParameters()
const payloadArb: fc.Arbitrary<Payload> = fc.oneof(bodyArb, queryArb)
// Any unix time the 12-digit header format can carry, and our clock somewhere within the allowed skew.
const timestampArb = fc.integer({ min: 0, max: 999_999_999_999 })
const skewArb = fc.integer({ min: -300, max: 300 })

const bytesOf = (payload: Payload): Uint8Array =>
  typeof payload === "string" ? encoder.encode(payload) : Uint8Array.from(payload)

/** Replaces the character at `index` (modulo the length) by a different one taken from `alphabet`. */
const replaceCharAt = (text: string, index: number, pick: number, alphabet: string): string => {
  const i = index % text.length
  const choices = [...alphabet].filter((c) => c !== text[i])
  return text.slice(0, i) + choices[pick % choices.length] + text.slice(i + 1)
}

/** A signature by "k" over a timestamp string as it stands (sign() only takes numbers). */
const signWith = (timestamp: string) => `v1=${createHmac("sha256", "k").update(`${timestamp}.b`).digest("hex")}`

const accepts = (
  signature: string | null | undefined,
  overrides: Partial<{ secret: string | undefined; timestamp: string | null | undefined; payload: Payload }> & {
    nowSeconds?: number
    skewSeconds?: number
  } = {}
) => verify({ secret: "k", timestamp: String(now), signature, payload: "b", nowSeconds: now, ...overrides })

describe("AUTH-2 / AUTH-6 / decisions webhook signatures (property)", () => {
  it("a signature verifies for its secret, timestamp and payload (body, raw bytes or query)", () => {
    fc.assert(
      fc.property(secretArb, payloadArb, timestampArb, skewArb, (secret, payload, timestamp, skew) => {
        const signature = sign({ secret, timestamp, payload })
        assert.match(signature, /^v1=[0-9a-f]{64}$/)
        assert.isTrue(
          verify({ secret, timestamp: String(timestamp), signature, payload, nowSeconds: timestamp + skew })
        )
      }),
      { numRuns: 300 }
    )
  })

  it("a string payload and its UTF-8 bytes carry the same signature", () => {
    fc.assert(
      fc.property(secretArb, fc.string({ maxLength: 200, unit: "grapheme" }), (secret, payload) => {
        assert.strictEqual(
          sign({ secret, timestamp: now, payload }),
          sign({ secret, timestamp: now, payload: encoder.encode(payload) })
        )
      })
    )
  })

  it("matches known answers computed independently (openssl dgst -sha256 -hmac)", () => {
    assert.strictEqual(
      sign({ secret: "s3cret", timestamp: now, payload: '{"a":1}' }),
      "v1=476d445fc5d734bcaf69961f0de38cb8c2ec42450829655895ca5e064c0765c9"
    )
    assert.strictEqual(
      sign({ secret: "s3cret", timestamp: now, payload: "email=a%40b.co&x=1" }),
      "v1=f0454b834d3ab59c181216362fb4f9b10b1daaebd25c4b6c4f0d6b42b2646c86"
    )
    assert.strictEqual(
      sign({ secret: "s3cret", timestamp: now, payload: Uint8Array.of(0x00, 0xff, 0x10) }),
      "v1=3c2eef439be8230fee201642eda512dcdc0cdca8c678f1cb82c27c3d49f8a45c"
    )
  })

  it("matches an HMAC-SHA256 of '<timestamp>.<payload>' computed with node:crypto", () => {
    fc.assert(
      fc.property(secretArb, payloadArb, timestampArb, (secret, payload, timestamp) => {
        const expected = createHmac("sha256", secret)
          .update(Buffer.concat([Buffer.from(`${timestamp}.`), bytesOf(payload)]))
          .digest("hex")
        assert.strictEqual(sign({ secret, timestamp, payload }), `v1=${expected}`)
      })
    )
  })

  it("refuses every single-byte change to the signed bytes of a body or query", () => {
    fc.assert(
      fc.property(
        secretArb,
        payloadArb.filter((payload) => payload.length > 0),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        (secret, payload, i, delta) => {
          const signature = sign({ secret, timestamp: now, payload })
          const tampered = bytesOf(payload)
          const at = i % tampered.length
          tampered[at] = (tampered[at]! + delta) % 256
          assert.isTrue(verify({ secret, timestamp: String(now), signature, payload, nowSeconds: now }))
          assert.isFalse(verify({ secret, timestamp: String(now), signature, payload: tampered, nowSeconds: now }))
        }
      ),
      { numRuns: 300 }
    )
  })

  it("refuses every single-character change to a query string", () => {
    fc.assert(
      fc.property(
        secretArb,
        queryArb.filter((query) => query.length > 0),
        fc.nat(),
        fc.nat(),
        (secret, query, i, c) => {
          const signature = sign({ secret, timestamp: now, payload: query })
          const tampered = replaceCharAt(query, i, c, "abcXYZ019=&%+-._~!$'()*,;:@/?")
          assert.isFalse(verify({ secret, timestamp: String(now), signature, payload: tampered, nowSeconds: now }))
        }
      )
    )
  })

  it("refuses every single-character change to the timestamp, even one still inside the window", () => {
    fc.assert(
      fc.property(secretArb, bodyArb, timestampArb, fc.nat(), fc.nat(), (secret, payload, timestamp, i, c) => {
        const signature = sign({ secret, timestamp, payload })
        const tampered = replaceCharAt(String(timestamp), i, c, "0123456789")
        // Our clock is set to the tampered time, so only the signature can refuse it.
        assert.isFalse(verify({ secret, timestamp: tampered, signature, payload, nowSeconds: Number(tampered) }))
      }),
      { numRuns: 300 }
    )
  })

  it("refuses every change of one hex digit of the signature, and of any one character of the header", () => {
    fc.assert(
      fc.property(secretArb, payloadArb, fc.nat(), fc.nat(), (secret, payload, i, c) => {
        const signature = sign({ secret, timestamp: now, payload })
        const forged = `v1=${replaceCharAt(signature.slice(3), i, c, hexDigits)}`
        assert.isFalse(verify({ secret, timestamp: String(now), signature: forged, payload, nowSeconds: now }))
        const mangled = replaceCharAt(signature, i, c, `${hexDigits}ABCDEFVv12=x ,`)
        assert.isFalse(verify({ secret, timestamp: String(now), signature: mangled, payload, nowSeconds: now }))
      }),
      { numRuns: 300 }
    )
  })

  it("refuses a signature made with another secret, even one differing in a single character", () => {
    fc.assert(
      fc.property(secretArb, secretArb, payloadArb, fc.nat(), fc.nat(), (secret, other, payload, i, c) => {
        fc.pre(secret !== other)
        const signature = sign({ secret: other, timestamp: now, payload })
        assert.isFalse(verify({ secret, timestamp: String(now), signature, payload, nowSeconds: now }))
        const near = replaceCharAt(secret, i, c, "aZ0_-")
        assert.isFalse(
          verify({
            secret,
            timestamp: String(now),
            signature: sign({ secret: near, timestamp: now, payload }),
            payload,
            nowSeconds: now
          })
        )
      })
    )
  })

  it("accepts a timestamp up to 300 s away in either direction and refuses anything further", () => {
    fc.assert(
      fc.property(
        timestampArb,
        fc.integer({ min: -1_000_000, max: 1_000_000 }),
        bodyArb,
        (timestamp, offset, payload) => {
          const signature = sign({ secret: "k", timestamp, payload })
          const ok = verify({
            secret: "k",
            timestamp: String(timestamp),
            signature,
            payload,
            nowSeconds: timestamp + offset
          })
          assert.strictEqual(ok, Math.abs(offset) <= 300, `offset ${offset}`)
        }
      )
    )
    for (const offset of [-300, 0, 300]) {
      const signature = sign({ secret: "k", timestamp: now + offset, payload: "b" })
      assert.isTrue(accepts(signature, { timestamp: String(now + offset) }), `offset ${offset}`)
    }
    for (const offset of [-301, 301, -100_000, 100_000]) {
      const signature = sign({ secret: "k", timestamp: now + offset, payload: "b" })
      assert.isFalse(accepts(signature, { timestamp: String(now + offset) }), `offset ${offset}`)
    }
  })

  it("honours another skew, and refuses when the clock or the skew is not a number", () => {
    const signature = sign({ secret: "k", timestamp: now - 11, payload: "b" })
    assert.isTrue(accepts(signature, { timestamp: String(now - 11), skewSeconds: 11 }))
    assert.isFalse(accepts(signature, { timestamp: String(now - 11), skewSeconds: 10 }))
    const fresh = sign({ secret: "k", timestamp: now, payload: "b" })
    assert.isTrue(accepts(fresh))
    assert.isFalse(accepts(fresh, { nowSeconds: Number.NaN }))
    assert.isFalse(accepts(fresh, { skewSeconds: Number.NaN }))
    assert.isFalse(accepts(fresh, { nowSeconds: Number.POSITIVE_INFINITY }))
  })

  it("refuses malformed signature headers", () => {
    const good = sign({ secret: "k", timestamp: now, payload: "b" })
    const hex = good.slice(3)
    assert.isTrue(accepts(good))
    const mixedCase = [...hex].map((c, i) => (i % 2 === 0 ? c.toUpperCase() : c)).join("")
    for (const signature of [
      "",
      " ",
      ",",
      hex,
      `v2=${hex}`,
      `V1=${hex}`,
      `v0=${hex}`,
      `sha256=${hex}`,
      `v1:${hex}`,
      `v1 =${hex}`,
      `v1= ${hex}`,
      `v1=${hex};`,
      `v1=v1=${hex}`,
      `v1="${hex}"`,
      `v1=${hex.toUpperCase()}`,
      `v1=${mixedCase}`,
      `v1=${hex.slice(1)}`,
      `v1=${hex.slice(2)}`,
      `v1=${hex}0`,
      `v1=${hex}${hex}`,
      `v1=${"g".repeat(64)}`,
      `v1=${hex.slice(0, 63)}z`,
      `v1=${Buffer.from(hex, "hex").toString("base64")}`,
      `v1=${Buffer.from(hex, "hex").toString("base64url")}`,
      "v1=",
      `${" ".repeat(1024)}${good}`,
      null,
      undefined
    ]) {
      assert.isFalse(accepts(signature), JSON.stringify(signature))
    }
  })

  it("refuses random header strings", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.stringMatching(/^v1=[0-9a-f]{64}$/)), (h) =>
        assert.isFalse(accepts(h))
      )
    )
  })

  it("refuses malformed timestamps and a missing secret", () => {
    const good = sign({ secret: "k", timestamp: now, payload: "b" })
    for (const timestamp of [
      "",
      "abc",
      `${now}.5`,
      `${now}.0`,
      "-1",
      `-${now}`,
      `+${now}`,
      ` ${now}`,
      `${now} `,
      `${now}\n`,
      "1.8e9",
      "0x6B49D200",
      "1".repeat(13),
      null,
      undefined
    ]) {
      // Each is signed as it stands, and our clock put at its value when it has one: only its form refuses it.
      const signature = timestamp === null || timestamp === undefined ? good : signWith(timestamp)
      const clock = Number.isFinite(Number(timestamp)) ? Number(timestamp) : now
      assert.isFalse(accepts(signature, { timestamp, nowSeconds: clock }), JSON.stringify(timestamp))
    }
    assert.isFalse(accepts(good, { secret: "" }))
    assert.isFalse(accepts(good, { secret: undefined }))
  })

  it("accepts a header carrying several signatures (key rotation) when any one is valid", () => {
    const good = sign({ secret: "k", timestamp: now, payload: "b" })
    const old = sign({ secret: "old", timestamp: now, payload: "b" })
    const other = sign({ secret: "other", timestamp: now, payload: "b" })
    for (const header of [`${old} ${good}`, `${good},${old}`, `${old}, ${good}`, `${old},${other}  ${good}`]) {
      assert.isTrue(accepts(header), header)
    }
    for (const header of [`${old} ${other}`, `${old},${other}`, `${old}${good}`, `${old};${good}`]) {
      assert.isFalse(accepts(header), header)
    }
  })
})
