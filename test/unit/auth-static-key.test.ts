import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { checkStaticKey, constantTimeEqual } from "../../core/auth/StaticKey.ts"
import { NotConfigured, Unauthorized } from "../../core/kernel/Errors.ts"

const refusal = (expected: string | undefined, presented: string | undefined | null, production: boolean) =>
  Effect.flip(checkStaticKey({ expected, presented, production }))

describe("AUTH-1 static keys", () => {
  it.effect("production with the key unset is NotConfigured, whatever is presented", () =>
    Effect.gen(function* () {
      for (const expected of [undefined, ""]) {
        for (const presented of ["anything", "", undefined, null]) {
          assert.instanceOf(yield* refusal(expected, presented, true), NotConfigured)
        }
      }
    })
  )

  it.effect("outside production an unset key is Unauthorized: never open", () =>
    Effect.gen(function* () {
      for (const expected of [undefined, ""]) {
        for (const presented of ["anything", "", undefined, null]) {
          assert.instanceOf(yield* refusal(expected, presented, false), Unauthorized)
        }
      }
    })
  )

  it.effect("a wrong, missing, truncated, extended or differently cased key is Unauthorized", () =>
    Effect.gen(function* () {
      for (const production of [true, false]) {
        for (const presented of [
          "wrong-key",
          "right-ke",
          "right-key ",
          " right-key",
          "RIGHT-KEY",
          "",
          undefined,
          null
        ]) {
          assert.instanceOf(yield* refusal("right-key", presented, production), Unauthorized, String(presented))
        }
      }
    })
  )

  it.effect("the right key passes, in production and elsewhere", () =>
    Effect.gen(function* () {
      yield* checkStaticKey({ expected: "right-key", presented: "right-key", production: true })
      yield* checkStaticKey({ expected: "right-key", presented: "right-key", production: false })
      yield* checkStaticKey({ expected: "ключ-🔑", presented: "ключ-🔑", production: true })
    })
  )

  it("constantTimeEqual compares strings of any lengths", () => {
    assert.isTrue(constantTimeEqual("", ""))
    assert.isTrue(constantTimeEqual("same", "same"))
    assert.isFalse(constantTimeEqual("same", "sam"))
    assert.isFalse(constantTimeEqual("a", "b".repeat(10_000)))
    assert.isFalse(constantTimeEqual("", "x"))
  })
})
