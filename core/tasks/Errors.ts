import { Schema } from "effect"

/**
 * The task inbox contract, "Errors", 400: `{error: 'Validation failed', fields: {<field>: <message>}}`. One entry per bad
 * field; unknown values get `Must be one of: ...` (core/tasks/Values.ts).
 */
export class InvalidFields extends Schema.TaggedError<InvalidFields>()("InvalidFields", {
  fields: Schema.Record(Schema.String, Schema.String)
}) {}

/** A proposal is resolved only while it is `To Consider` (answered 409). */
export class ProposalNotOpen extends Schema.TaggedError<ProposalNotOpen>()("ProposalNotOpen", {
  aiStatus: Schema.String
}) {}
