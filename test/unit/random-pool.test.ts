import { assert, describe, it } from "@effect/vitest"
import { makeRandomPool } from "../../core/auth/RandomPool.ts"
import { open, seal } from "../../core/auth/SecretBox.ts"

describe("random bytes drawn from a pool", () => {
  it("hands out slices of the asked length, never the same bytes twice, across refills", () => {
    const draw = makeRandomPool(64)
    const seen = new Set<string>()
    for (let i = 0; i < 200; i++) {
      const bytes = draw(12)
      assert.strictEqual(bytes.length, 12)
      seen.add(bytes.toString("hex"))
    }
    assert.strictEqual(seen.size, 200)
    assert.strictEqual(draw(100).length, 100)
  })

  it("hands out copies: a refill does not change bytes already handed out", () => {
    const draw = makeRandomPool(24)
    const first = draw(12)
    const kept = first.toString("hex")
    draw(12)
    draw(12)
    assert.strictEqual(first.toString("hex"), kept)
  })

  it("seals with a fresh nonce each time, and opens only under the key it was sealed with", () => {
    const a = seal("key-a", "hello")
    const b = seal("key-b", "hello")
    assert.notStrictEqual(a.split(".")[1], seal("key-a", "hello").split(".")[1])
    assert.strictEqual(open("key-a", a), "hello")
    assert.strictEqual(open("key-b", b), "hello")
    assert.isUndefined(open("key-b", a))
    assert.isUndefined(open("key-a", b))
  })
})
