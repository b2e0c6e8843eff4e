import { Schema, SchemaGetter, SchemaTransformation } from "effect"
import { inputSchema, type Loose } from "./InputDecoding.ts"
import { DateText, isCalendarDate, PriorityValue } from "./TaskFields.ts"

/** The directory's inputs: a project's changes, the meetings' time window (docs/tasks.md, "Validation"). */

export const projectStatusMaxLength = 50

/** A project's status is free text of the record store: trimmed, 1 to 50 characters. */
export const ProjectStatus = Schema.String.annotate({
  description: `Trimmed, then 1 to ${projectStatusMaxLength} characters`
})
  .pipe(Schema.decode(SchemaTransformation.trim()))
  .check(
    Schema.makeFilter(
      (status: string) =>
        (status.length > 0 && status.length <= projectStatusMaxLength) ||
        `Required, at most ${projectStatusMaxLength} characters`
    )
  )

/** PATCH /api/projects/{id}: only the fields to change; `null` clears the dates, the client, the manager. */
export const ProjectPatchBody = inputSchema(
  "ProjectPatchBody",
  Schema.Struct({
    status: Schema.optionalKey(ProjectStatus),
    priority: Schema.optionalKey(PriorityValue),
    startDate: Schema.optionalKey(Schema.NullOr(DateText)),
    endDate: Schema.optionalKey(Schema.NullOr(DateText)),
    clientId: Schema.optionalKey(Schema.NullOr(Schema.String)),
    accountManager: Schema.optionalKey(Schema.NullOr(Schema.String))
  })
)
export type ProjectPatchBody = Loose<typeof ProjectPatchBody.Encoded>

const dateTimePattern = /^\d{4}-\d{2}-\d{2}T/

/** A date (`YYYY-MM-DD`, kept as it is) or a date-time (decoded to its UTC ISO text), as meeting filters take them. */
export const MeetingTime = Schema.String.check(
  Schema.makeFilter(
    (value: string) =>
      isCalendarDate(value) ||
      (dateTimePattern.test(value) && Number.isFinite(Date.parse(value))) ||
      "Must be an ISO date (YYYY-MM-DD) or date-time"
  )
).pipe(
  Schema.decode({
    decode: SchemaGetter.transform((value: string) =>
      isCalendarDate(value) ? value : new Date(Date.parse(value)).toISOString()
    ),
    encode: SchemaGetter.passthrough()
  })
)

/** GET /api/meetings/recent: `start` and `end` of the window. */
export const MeetingsWindow = Schema.Struct({
  start: Schema.optionalKey(MeetingTime),
  end: Schema.optionalKey(MeetingTime)
})
