import { Schema, SchemaGetter, SchemaTransformation } from "effect"
import { MeetingTime } from "./DirectoryInput.ts"
import { Enumerated, required } from "./TaskFields.ts"

/**
 * The query parameters of the task inbox's lists and searches, as Schemas the HTTP contract declares
 * (docs/tasks.md, "Validation"). A use case given the decoded value checks it with the same schema's rules.
 */

/** `true` or `false`, in any case; absent is false (the use case's choice). */
export const Flag = Enumerated(["true", "false"]).pipe(
  Schema.decodeTo(Schema.Boolean, {
    decode: SchemaGetter.transform((flag: "true" | "false") => flag === "true"),
    encode: SchemaGetter.transform((flag: boolean): "true" | "false" => (flag ? "true" : "false"))
  })
)

export const historyDaysMax = 3650

/** How many days back history goes: a whole number from 1 to 3650. */
export const HistoryDays = Schema.Number.check(
  Schema.makeFilter(
    (days: number) =>
      (Number.isInteger(days) && days >= 1 && days <= historyDaysMax) ||
      `Must be a whole number from 1 to ${historyDaysMax}`
  )
)

/** `days` as a query parameter: digits (spaces around allowed); anything else is refused as HistoryDays refuses. */
export const HistoryDaysParam = Schema.String.annotate({
  description: `A whole number from 1 to ${historyDaysMax}`
}).pipe(
  Schema.decodeTo(HistoryDays, {
    decode: SchemaGetter.transform((text: string) =>
      /^\d{1,6}$/.test(text.trim()) ? Number(text.trim()) : Number.NaN
    ),
    encode: SchemaGetter.transform((days: number) => String(days))
  })
)

export const projectSearchMinLength = 2

/** What a project search looks for: trimmed, at least 2 characters; absent counts as empty. */
export const ProjectSearchTerm = Schema.String.annotate({
  description: `Trimmed, then at least ${projectSearchMinLength} characters`
})
  .pipe(Schema.decode(SchemaTransformation.trim()))
  .check(
    Schema.isMinLength(projectSearchMinLength, { message: `Must be at least ${projectSearchMinLength} characters` })
  )

/** An id a query needs: trimmed, not empty; absent is `Required`. */
export const RequiredId = Schema.String.pipe(Schema.decode(SchemaTransformation.trim()))
  .check(Schema.isMinLength(1, { message: required }))
  .annotateKey({ messageMissingKey: required })

/** GET /api/tasks/search. */
export const SearchQuery = { activeOnly: Schema.optionalKey(Flag), clientName: Schema.optionalKey(Schema.String) }
/** GET /api/tasks/history. */
export const HistoryQuery = { days: Schema.optionalKey(HistoryDaysParam) }
/** GET /api/projects (an absent `q` is refused by the use case, as an empty one is). */
export const ProjectSearchQuery = { q: Schema.optionalKey(ProjectSearchTerm) }
/** GET /api/outcomes. */
export const OutcomesQuery = { projectId: RequiredId }
/** GET /api/meetings/recent: everyone's meetings (`all`), a client's, a window. */
export const MeetingsQuery = {
  all: Schema.optionalKey(Flag),
  client: Schema.optionalKey(Schema.String),
  start: Schema.optionalKey(MeetingTime),
  end: Schema.optionalKey(MeetingTime)
}
