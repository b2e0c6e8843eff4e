import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { hashSecret, issueSecret, verifySecret } from "../../core/auth/IssuedSecret.ts"
import { checkStaticKey } from "../../core/auth/StaticKey.ts"

const tagOf = (exit: Exit.Exit<unknown, { _tag: string }>) =>
  Exit.isFailure(exit) && exit.cause.reasons[0]?._tag === "Fail" ? exit.cause.reasons[0].error._tag : "success"

describe("AUTH-1 static keys", () => {
  it.effect("fail closed: unset in production is NotConfigured, unset elsewhere Unauthorized, never open", () =>
    Effect.gen(function* () {
      const run = (expected: string | undefined, presented: string | undefined, production: boolean) =>
        Effect.exit(checkStaticKey({ expected, presented, production }))
      assert.strictEqual(tagOf(yield* run(undefined, "anything", true)), "NotConfigured")
      assert.strictEqual(tagOf(yield* run("", "", true)), "NotConfigured")
      assert.strictEqual(tagOf(yield* run(undefined, "anything", false)), "Unauthorized")
      assert.strictEqual(tagOf(yield* run(undefined, undefined, false)), "Unauthorized")
      assert.strictEqual(tagOf(yield* run("right-key", "wrong-key", true)), "Unauthorized")
      assert.strictEqual(tagOf(yield* run("right-key", "right-ke", true)), "Unauthorized")
      assert.strictEqual(tagOf(yield* run("right-key", undefined, true)), "Unauthorized")
      assert.strictEqual(tagOf(yield* run("right-key", "right-key", true)), "success")
    })
  )
})

describe("issued secrets", () => {
  it("carry the prefix, show a 12-character prefix, are stored as a hash and verify only themselves", () => {
    const a = issueSecret("dcd_")
    const b = issueSecret("dcd_")
    assert.match(a.plaintext, /^dcd_[A-Za-z0-9_-]{43}$/)
    assert.strictEqual(a.displayPrefix, a.plaintext.slice(0, 12))
    assert.notStrictEqual(a.plaintext, b.plaintext)
    assert.notInclude(a.hash, a.plaintext.slice(4))
    assert.strictEqual(a.hash, hashSecret(a.plaintext))
    assert.isTrue(verifySecret(a.plaintext, a.hash))
    assert.isFalse(verifySecret(b.plaintext, a.hash))
    assert.isFalse(verifySecret(a.plaintext, "00"))
  })
})
