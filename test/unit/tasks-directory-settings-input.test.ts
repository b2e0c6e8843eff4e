import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { MeetingsWindow, ProjectPatchBody } from "../../core/tasks/DirectoryInput.ts"
import { ApiKeyCreateBody, SettingsPatchBody } from "../../core/tasks/SettingsInput.ts"
import { decodeBody, priorityMessage } from "../support/TaskInputs.ts"

describe("a project's changes", () => {
  it("are canonical: status trimmed, priority from any case or alias; null clears dates, client, manager", () => {
    assert.deepStrictEqual(
      decodeBody(ProjectPatchBody, {
        status: "  On Hold ",
        priority: "top",
        startDate: null,
        endDate: "2026-03-01",
        clientId: null,
        accountManager: "bob@example.com"
      }),
      Result.succeed({
        status: "On Hold",
        priority: "P1: Top Priority",
        startDate: null,
        endDate: "2026-03-01",
        clientId: null,
        accountManager: "bob@example.com"
      })
    )
  })

  it("answers every bad field at once", () => {
    assert.deepStrictEqual(
      decodeBody(ProjectPatchBody, { status: "", priority: "whenever", endDate: "soon", startDate: 5, clientId: 5 }),
      Result.fail({
        status: "Required, at most 50 characters",
        priority: priorityMessage,
        endDate: "Must be a date as YYYY-MM-DD",
        startDate: "Expected string | null",
        clientId: "Expected string | null"
      })
    )
    assert.deepStrictEqual(
      decodeBody(ProjectPatchBody, { status: "x".repeat(51), priority: null }),
      Result.fail({ status: "Required, at most 50 characters", priority: "Expected string" })
    )
  })
})

describe("the meetings' window", () => {
  it("takes a date as it is and a date-time as its UTC ISO text", () => {
    assert.deepStrictEqual(
      decodeBody(MeetingsWindow, { start: "2026-01-31", end: "2026-02-01T10:00:00+02:00" }),
      Result.succeed({ start: "2026-01-31", end: "2026-02-01T08:00:00.000Z" })
    )
    assert.deepStrictEqual(
      decodeBody(MeetingsWindow, { start: "yesterday", end: "2026-02-30" }),
      Result.fail({
        start: "Must be an ISO date (YYYY-MM-DD) or date-time",
        end: "Must be an ISO date (YYYY-MM-DD) or date-time"
      })
    )
  })
})

describe("the settings", () => {
  it("take values in any case, nested or with dotted keys; the nested one wins", () => {
    assert.deepStrictEqual(
      decodeBody(SettingsPatchBody, {
        showSentNav: false,
        notifications: { channel: " Slack " },
        "notifications.channel": "none",
        "notifications.frequency": "WEEKLY"
      }),
      Result.succeed({
        showSentNav: false,
        notifications: { channel: "slack" },
        "notifications.channel": "none",
        "notifications.frequency": "weekly"
      })
    )
  })

  it("answer every bad value at once, named as the nested key", () => {
    assert.deepStrictEqual(
      decodeBody(SettingsPatchBody, { notifications: { channel: "pager", frequency: "hourly" }, showSentNav: "yes" }),
      Result.fail({
        showSentNav: "Expected boolean",
        "notifications.channel": "Must be one of: email, slack, none",
        "notifications.frequency": "Must be one of: immediate, daily, weekly"
      })
    )
    assert.deepStrictEqual(
      decodeBody(SettingsPatchBody, { "notifications.channel": "x", "notifications.frequency": 5 }),
      Result.fail({
        "notifications.channel": "Must be one of: email, slack, none",
        "notifications.frequency": "Expected string"
      })
    )
    assert.deepStrictEqual(
      decodeBody(SettingsPatchBody, { notifications: 5 }),
      Result.fail({ notifications: "Expected object" })
    )
  })

  it("an API key's name is trimmed, 1 to 100 characters", () => {
    assert.deepStrictEqual(decodeBody(ApiKeyCreateBody, { name: " laptop " }), Result.succeed({ name: "laptop" }))
    for (const name of ["  ", "x".repeat(101), undefined]) {
      assert.deepStrictEqual(
        decodeBody(ApiKeyCreateBody, { name }),
        Result.fail({ name: "Required, at most 100 characters" }),
        String(name)
      )
    }
  })
})
