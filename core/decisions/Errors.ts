import { Schema } from "effect"
import { ActionStatus } from "./ActionMachine.ts"
import { DecisionStatus } from "./Decision.ts"

/** The service's own codes. */
export class UnknownRole extends Schema.TaggedError<UnknownRole>()("UnknownRole", {
  validRoles: Schema.Array(Schema.String)
}) {}

export class InvalidTransition extends Schema.TaggedError<InvalidTransition>()("InvalidTransition", {
  status: DecisionStatus
}) {}

export class UnknownTemplate extends Schema.TaggedError<UnknownTemplate>()("UnknownTemplate", {
  validTemplates: Schema.Array(Schema.String)
}) {}

/** A record action cannot make that move from its status (e.g. retrying one that is not dead-lettered). */
export class InvalidActionTransition extends Schema.TaggedError<InvalidActionTransition>()("InvalidActionTransition", {
  status: Schema.Literals(ActionStatus)
}) {}
