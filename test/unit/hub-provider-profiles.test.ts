import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { defaultProviderProfiles, parseProviderProfiles } from "../../core/hub/ServiceDataProviders.ts"

describe("HUB_PROVIDER_PROFILES", () => {
  it("unset or blank means the defaults", () => {
    for (const text of [undefined, "", "  "]) {
      assert.deepStrictEqual(Result.getOrThrow(parseProviderProfiles(text)), defaultProviderProfiles)
    }
  })

  it("gives each named caller its providers and every other caller none", () => {
    const profiles = Result.getOrThrow(
      parseProviderProfiles(" tasks:search+schema-analysis , crm:search,meeting-recaps:")
    )
    assert.deepStrictEqual(profiles, { tasks: ["search", "schema-analysis"], crm: ["search"], "meeting-recaps": [] })
  })

  it("refuses a bad entry by its position", () => {
    for (const [text, position] of [
      ["tasks:weather", 1],
      ["tasks:search,decisions:search", 2],
      ["tasks:search,tasks:schema-analysis", 2],
      ["tasks", 1],
      ["tasks:search:more", 1]
    ] as const) {
      const result = parseProviderProfiles(text)
      assert.isTrue(Result.isFailure(result), text)
      if (Result.isFailure(result)) assert.include(result.failure, `entry ${position} `)
    }
  })
})
