import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import * as fc from "fast-check"
import { ContextCallers, contextKeyMinLength, KeyedCallers, parseContextKeys } from "../../core/hub/ContextKeys.ts"

const key = "k".repeat(contextKeyMinLength)

const parsed = (text: string | undefined) => {
  const result = parseContextKeys(text)
  if (Result.isFailure(result)) throw new Error(`expected keys, got: ${result.failure}`)
  return result.success
}

const refusal = (text: string) => {
  const result = parseContextKeys(text)
  if (Result.isSuccess(result)) throw new Error("expected a refusal")
  return result.failure
}

describe("HUB_CONTEXT_KEYS", () => {
  it("unset or blank means no keys: the plane is not configured", () => {
    for (const text of [undefined, "", "   "]) {
      const keys = parsed(text)
      assert.isFalse(keys.configured)
      for (const caller of ContextCallers) assert.isUndefined(keys.keyFor(caller))
    }
  })

  it("answers each caller's key; the key is everything after the first colon", () => {
    const keys = parsed(` tasks:${key}-tasks , error-monitoring:${key}:with:colons`)
    assert.isTrue(keys.configured)
    assert.strictEqual(keys.keyFor("tasks"), `${key}-tasks`)
    assert.strictEqual(keys.keyFor("error-monitoring"), `${key}:with:colons`)
    assert.isUndefined(keys.keyFor("schema-analysis"))
    assert.isUndefined(keys.keyFor("meeting-recaps"))
  })

  it("takes the keys of the service-data callers too (onboarding-portal, crm)", () => {
    const keys = parsed(`onboarding-portal:${key}-portal,crm:${key}-crm`)
    assert.strictEqual(keys.keyFor("onboarding-portal"), `${key}-portal`)
    assert.strictEqual(keys.keyFor("crm"), `${key}-crm`)
    assert.isUndefined(keys.keyFor("tasks"))
  })

  it("a name outside the caller enum has no key, whatever it is (prototype names included)", () => {
    const keys = parsed(`tasks:${key}`)
    for (const name of ["decisions", "TASKS", "__proto__", "constructor", "toString", ""]) {
      assert.isUndefined(keys.keyFor(name))
    }
  })

  it("refuses a bad entry by its position and never repeats the entry", () => {
    const cases: ReadonlyArray<readonly [string, number]> = [
      [`tasks:${key},decisions:${key}-secret`, 2],
      [`tasks:short-secret`, 1],
      [`tasks:${key},,schema-analysis:${key}`, 2],
      [`tasks:${key}-secret,tasks:${key}-other`, 2],
      [`tasks ${key}-secret`, 1],
      [`tasks:${key} with-space`, 1],
      [`tasks:${key},meeting-recaps:${key},:${key}-secret`, 3]
    ]
    for (const [text, position] of cases) {
      const message = refusal(text)
      assert.include(message, `entry ${position} `)
      assert.notInclude(message, "secret")
      assert.notInclude(message, key)
    }
  })

  it("round-trips any set of well-formed entries", () => {
    const entry = fc.tuple(
      fc.constantFrom(...KeyedCallers),
      fc.stringMatching(new RegExp(`^[A-Za-z0-9_:.-]{${contextKeyMinLength},64}$`))
    )
    fc.assert(
      fc.property(fc.uniqueArray(entry, { selector: ([caller]) => caller, minLength: 1 }), (entries) => {
        const keys = parsed(entries.map(([caller, k]) => `${caller}:${k}`).join(","))
        for (const caller of KeyedCallers) {
          assert.strictEqual(keys.keyFor(caller), entries.find(([c]) => c === caller)?.[1])
        }
      })
    )
  })
})
