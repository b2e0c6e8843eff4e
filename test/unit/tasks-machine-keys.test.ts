import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { parseMachineKeys } from "../../core/tasks/MachineKeys.ts"

describe("TASKS_MACHINE_KEYS (key:email:Name, comma-separated)", () => {
  it("reads each entry, normalising the email and keeping colons in the name", () => {
    assert.deepStrictEqual(
      parseMachineKeys(
        " key-one-0123456789abcdef:Ops@Example.com:Ops Bot , key-two-0123456789abcdef:ci@example.com:CI: nightly "
      ),
      Result.succeed([
        { key: "key-one-0123456789abcdef", email: "ops@example.com", name: "Ops Bot" },
        { key: "key-two-0123456789abcdef", email: "ci@example.com", name: "CI: nightly" }
      ])
    )
  })

  it("is empty when unset", () => {
    assert.deepStrictEqual(parseMachineKeys(""), Result.succeed([]))
    assert.deepStrictEqual(parseMachineKeys(" , "), Result.succeed([]))
  })

  it("refuses a short key, a bad email or a missing name, naming the entry's position and never the key", () => {
    for (const [text, position] of [
      ["short:ops@example.com:Ops", 1],
      ["key-one-0123456789abcdef:ops@example.com:Ops,key-two-0123456789abcdef:not-an-email:Ops", 2],
      ["key-one-0123456789abcdef:ops@example.com", 1],
      ["key-one-0123456789abcdef:ops@example.com:   ", 1]
    ] as const) {
      const parsed = parseMachineKeys(text)
      assert.isTrue(Result.isFailure(parsed), text)
      if (Result.isFailure(parsed)) {
        assert.include(parsed.failure, `entry ${position}`)
        assert.notInclude(parsed.failure, "0123456789abcdef")
      }
    }
  })
})
