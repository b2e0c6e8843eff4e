import { Array as Arr, Schema, SchemaIssue } from "effect"

/** Where a request carried a field: its JSON or form body, its query string, its path or a header. */
export const FieldPlace = Schema.Literals(["body", "query", "path", "header"])
export type FieldPlace = typeof FieldPlace.Type

/**
 * One bad field of a refused request, the entry of a validation error's `details`: where the field was
 * (`in`), its name (a dotted path inside the body, a query or path parameter's name, a header's name; `""`
 * is the whole of its place) and what is wrong with it, in a few words a person can act on.
 */
export const FieldIssue = Schema.Struct({
  in: FieldPlace,
  field: Schema.String,
  message: Schema.String
}).annotate({ identifier: "FieldIssue" })
export type FieldIssue = typeof FieldIssue.Type

/**
 * A validation error's `details`: at least one bad field. A refusal with nothing to add about any one field
 * has no details at all rather than an empty list.
 */
export const FieldIssues = Schema.NonEmptyArray(FieldIssue)
export type FieldIssues = typeof FieldIssues.Type

export const bodyIssue = (field: string, message: string): FieldIssue => ({ in: "body", field, message })
export const queryIssue = (field: string, message: string): FieldIssue => ({ in: "query", field, message })
export const pathIssue = (field: string, message: string): FieldIssue => ({ in: "path", field, message })
export const headerIssue = (field: string, message: string): FieldIssue => ({ in: "header", field, message })

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * A schema's refusal of what a request carried in one place, one entry per bad field. A refusal of the whole
 * value names the field `""`.
 */
export const schemaIssues = (place: FieldPlace, issue: SchemaIssue.Issue): FieldIssues => {
  const issues = formatIssues(issue).issues.map((i): FieldIssue => ({
    in: place,
    field: (i.path ?? []).map((segment) => String(typeof segment === "object" ? segment.key : segment)).join("."),
    message: i.message
  }))
  return Arr.isReadonlyArrayNonEmpty(issues) ? issues : [{ in: place, field: "", message: "is not valid" }]
}

/** The `details` of a list of issues that may be empty: none when it is. */
export const detailsOf = (issues: ReadonlyArray<FieldIssue>): { readonly details?: FieldIssues } =>
  Arr.isReadonlyArrayNonEmpty(issues) ? { details: issues } : {}
