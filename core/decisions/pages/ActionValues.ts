import { Result, Schema } from "effect"
import { Email } from "../../kernel/Email.ts"
import { ValidationError } from "../../kernel/Errors.ts"
import { schemaIssues } from "../../kernel/FieldIssue.ts"
import { Decisions as L } from "../../kernel/Limits.ts"
import { OptionId, Slug } from "../Decision.ts"

/**
 * The form values an action is posted with, one shape per action. A form sends every field, an empty one
 * as "", so empty values count as not given. Actions without a form take no values.
 */

/** What arrives: a flat object of form values. */
export const ActionValuesBody = Schema.Record(
  Schema.String.check(Schema.isMaxLength(64)),
  Schema.String.check(Schema.isMaxLength(L.bodyMax))
).annotate({ identifier: "ActionValues" })
export type ActionValues = typeof ActionValuesBody.Type

const bounded = (min: number, max: number) => Schema.String.check(Schema.isMinLength(min), Schema.isMaxLength(max))

export const ChooseValues = Schema.Struct({
  optionId: Schema.optionalKey(OptionId),
  rationale: Schema.optionalKey(bounded(1, L.rationaleMax))
})
export const DeclineValues = Schema.Struct({ rationale: Schema.optionalKey(bounded(1, L.rationaleMax)) })
export const AskValues = Schema.Struct({ question: bounded(1, L.infoQuestionMax) })
export const RouteValues = Schema.Struct({
  toRole: Schema.optionalKey(Slug),
  toEmail: Schema.optionalKey(Email),
  note: Schema.optionalKey(bounded(1, L.assignmentNoteMax))
})
export const AssignValues = Schema.Struct({ memberEmail: Email })
export const KeyValues = Schema.Struct({ name: bounded(1, 80) })
export const RecordStoreValues = Schema.Struct({
  token: Schema.String.check(
    Schema.isMinLength(1),
    Schema.isMaxLength(512),
    Schema.isPattern(/^\S+$/, { description: "a token without spaces" })
  )
})

/** Decodes an action's values: unknown fields are ignored, a bad one is a ValidationError naming it. */
export const decodeValues = <S extends Schema.Decoder<unknown>>(
  schema: S,
  values: ActionValues
): Result.Result<S["Type"], ValidationError> => {
  const given = Object.fromEntries(Object.entries(values).filter(([, value]) => value.trim() !== ""))
  const decoded = Schema.decodeUnknownResult(schema as Schema.Decoder<S["Type"]>, { errors: "all" })(given)
  if (Result.isSuccess(decoded)) return Result.succeed(decoded.success)
  return Result.fail(
    new ValidationError({
      message: "Some values are not valid.",
      details: schemaIssues("body", decoded.failure.issue)
    })
  )
}
