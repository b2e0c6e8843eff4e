import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import * as fc from "fast-check"
import { fieldErrors } from "../../core/tasks/InputDecoding.ts"
import { OriginValue, PriorityValue, StatusValue, TriageStatusValue } from "../../core/tasks/TaskFields.ts"
import { Origins, Priorities, priorityAliasNames, Statuses, TriageStatuses } from "../../core/tasks/Values.ts"

/** A value decoded by its field's schema: the canonical value, or the message the task inbox answers. */
const parser =
  (schema: Schema.Decoder<string>) =>
  (input: string): Result.Result<string, string> =>
    Result.mapError(Schema.decodeUnknownResult(schema)(input), (error) => fieldErrors(error.issue)["body"]!)
const parseStatus = parser(StatusValue)
const parsePriority = parser(PriorityValue)
const parseTriageStatus = parser(TriageStatusValue)
const parseOrigin = parser(OriginValue)

/** Any mix of upper and lower case, with optional surrounding spaces. */
const caseVariant = (value: string) =>
  fc
    .tuple(fc.array(fc.boolean(), { minLength: value.length, maxLength: value.length }), fc.constantFrom("", " ", "  "))
    .map(
      ([upper, pad]) => pad + [...value].map((c, i) => (upper[i] ? c.toUpperCase() : c.toLowerCase())).join("") + pad
    )

const sets = [
  { name: "status", values: Statuses, parse: parseStatus },
  { name: "priority", values: Priorities, parse: parsePriority },
  { name: "triage status", values: TriageStatuses, parse: parseTriageStatus },
  { name: "origin", values: Origins, parse: parseOrigin }
] as const

describe("task value sets (property)", () => {
  for (const set of sets) {
    it(`${set.name}: every case variant of a value is that value, and parsing is idempotent`, () => {
      fc.assert(
        fc.property(
          fc
            .constantFrom(...set.values)
            .chain((value) => caseVariant(value).map((variant) => [value, variant] as const)),
          ([value, variant]) => {
            const parsed = (set.parse as (s: string) => Result.Result<string, string>)(variant)
            assert.deepStrictEqual(parsed, Result.succeed(value))
            assert.deepStrictEqual(
              (set.parse as (s: string) => Result.Result<string, string>)(value),
              Result.succeed(value)
            )
          }
        )
      )
    })

    it(`${set.name}: anything else is refused with "Must be one of" listing the canonical values`, () => {
      fc.assert(
        fc.property(fc.string({ maxLength: 30 }), (input) => {
          const key = input.trim().toLowerCase()
          fc.pre(!set.values.some((v) => v.toLowerCase() === key))
          fc.pre(set.name !== "priority" || !priorityAliasNames.includes(key))
          assert.deepStrictEqual(
            (set.parse as (s: string) => Result.Result<string, string>)(input),
            Result.fail(`Must be one of: ${set.values.join(", ")}`)
          )
        })
      )
    })
  }

  it("names of Object.prototype are not values or aliases", () => {
    for (const name of ["__proto__", "constructor", "toString", "hasOwnProperty"]) {
      for (const set of sets)
        assert.isTrue(Result.isFailure((set.parse as (s: string) => Result.Result<string, string>)(name)), name)
    }
  })

  it("priority: every alias in any case maps to its canonical priority, and its answer parses to itself", () => {
    const expected: Record<string, string> = {
      p0: "P0: Urgent & Critical",
      urgent: "P0: Urgent & Critical",
      critical: "P0: Urgent & Critical",
      p1: "P1: Top Priority",
      high: "P1: Top Priority",
      top: "P1: Top Priority",
      p2: "P2: Medium Priority",
      normal: "P2: Medium Priority",
      medium: "P2: Medium Priority",
      p3: "P3: Low Priority",
      low: "P3: Low Priority",
      p4: "P4: Lowest Priority",
      lowest: "P4: Lowest Priority"
    }
    assert.deepStrictEqual([...priorityAliasNames].sort(), Object.keys(expected).sort())
    fc.assert(
      fc.property(
        fc.constantFrom(...Object.keys(expected)).chain((alias) => caseVariant(alias).map((v) => [alias, v] as const)),
        ([alias, variant]) => {
          const once: Result.Result<string, string> = parsePriority(variant)
          assert.deepStrictEqual(once, Result.succeed(expected[alias]!))
          assert.deepStrictEqual(parsePriority(Result.getOrThrow(once)) as Result.Result<string, string>, once)
        }
      )
    )
  })
})
