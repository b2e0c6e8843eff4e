import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import {
  HistoryQuery,
  MeetingsQuery,
  OutcomesQuery,
  ProjectSearchQuery,
  SearchQuery
} from "../../core/tasks/QueryInput.ts"
import { decodeBody } from "../support/TaskInputs.ts"

/** Query parameters arrive as text; each record of parameters decodes as the contract declares it. */
const decodeQuery = (fields: Schema.Struct.Fields, query: Record<string, string>) =>
  decodeBody(Schema.Struct(fields) as unknown as Schema.Decoder<unknown>, query)

describe("the task inbox's query parameters", () => {
  it("flags are true or false in any case", () => {
    assert.deepStrictEqual(decodeQuery(SearchQuery, { activeOnly: " TRUE" }), Result.succeed({ activeOnly: true }))
    assert.deepStrictEqual(decodeQuery(MeetingsQuery, { all: "False" }), Result.succeed({ all: false }))
    assert.deepStrictEqual(
      decodeQuery(SearchQuery, { activeOnly: "yes" }),
      Result.fail({ activeOnly: "Must be one of: true, false" })
    )
  })

  it("history days: a whole number from 1 to 3650", () => {
    assert.deepStrictEqual(decodeQuery(HistoryQuery, { days: " 7 " }), Result.succeed({ days: 7 }))
    assert.deepStrictEqual(decodeQuery(HistoryQuery, { days: "3650" }), Result.succeed({ days: 3650 }))
    for (const days of ["0", "abc", "-3", "1.5", "3651", ""]) {
      assert.deepStrictEqual(
        decodeQuery(HistoryQuery, { days }),
        Result.fail({ days: "Must be a whole number from 1 to 3650" }),
        days
      )
    }
  })

  it("a project search is trimmed, at least 2 characters; outcomes need a project id", () => {
    assert.deepStrictEqual(decodeQuery(ProjectSearchQuery, { q: " ap " }), Result.succeed({ q: "ap" }))
    assert.deepStrictEqual(
      decodeQuery(ProjectSearchQuery, { q: " a " }),
      Result.fail({ q: "Must be at least 2 characters" })
    )
    assert.deepStrictEqual(decodeQuery(OutcomesQuery, { projectId: " rec1 " }), Result.succeed({ projectId: "rec1" }))
    assert.deepStrictEqual(decodeQuery(OutcomesQuery, {}), Result.fail({ projectId: "Required" }))
    assert.deepStrictEqual(decodeQuery(OutcomesQuery, { projectId: "  " }), Result.fail({ projectId: "Required" }))
  })

  it("the meetings' window: dates kept, date-times in UTC, anything else refused, every bad one named", () => {
    assert.deepStrictEqual(
      decodeQuery(MeetingsQuery, { start: "2026-01-01", end: "2026-01-02T01:00:00+01:00", client: "Acme" }),
      Result.succeed({ start: "2026-01-01", end: "2026-01-02T00:00:00.000Z", client: "Acme" })
    )
    assert.deepStrictEqual(
      decodeQuery(MeetingsQuery, { start: "yesterday", all: "maybe" }),
      Result.fail({ all: "Must be one of: true, false", start: "Must be an ISO date (YYYY-MM-DD) or date-time" })
    )
  })
})
