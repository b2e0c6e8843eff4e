import { PayloadTooLarge, ValidationError } from "../kernel/Errors.ts"
import { bodyIssue } from "../kernel/FieldIssue.ts"
import { Decisions as L } from "../kernel/Limits.ts"
import { epochMs } from "../kernel/Timestamp.ts"
import type { DecisionCreate } from "./Decision.ts"
import type { Refusal } from "./DecisionMachine.ts"
import { InvalidTransition } from "./Errors.ts"

/** The answer to a move the machine refused. */
export const refusalToError = (refusal: Refusal): InvalidTransition | ValidationError => {
  switch (refusal._tag) {
    case "InvalidTransition":
      return new InvalidTransition({ status: refusal.status })
    case "UnknownOption":
      return new ValidationError({
        message: "The option is not one of this decision's options.",
        details: [bodyIssue("optionId", "is not an option of this decision")]
      })
    case "NoOpenInfoRequest":
      return new ValidationError({
        message: "The info request is not the decision's open question.",
        details: [bodyIssue("infoRequestId", "must name the latest unanswered info request")]
      })
    case "EmptyRoute":
      return new ValidationError({
        message: "Name a role or a member to route to.",
        details: [bodyIssue("toRole", "either toRole or toEmail is required")]
      })
  }
}

/** A refusal of one field of the request body. */
export const validationError = (field: string, message: string) =>
  new ValidationError({ message: `Invalid ${field}.`, details: [bodyIssue(field, message)] })

/**
 * What is wrong with a decision to create, checked before anything is read: undefined when nothing is.
 * (A body over its limit is its own answer, not a validation error.)
 */
export const createInputProblem = (
  input: DecisionCreate,
  now: number
): PayloadTooLarge | ValidationError | undefined => {
  if (input.body !== undefined && input.body.length > L.bodyMax) {
    return new PayloadTooLarge({ limitBytes: L.bodyMax })
  }
  const defaults = input.options.filter((o) => o.default === true)
  if (defaults.length > 1) return validationError("options", "at most one option may be the default")
  if (defaults.length === 1 && input.expiresAt === undefined) {
    return validationError("expiresAt", "is required when an option is the default")
  }
  if (input.expiresAt !== undefined && epochMs(input.expiresAt) <= now) {
    return validationError("expiresAt", "must be in the future")
  }
  const givenIds = input.options.flatMap((o) => (o.id === undefined ? [] : [o.id]))
  if (new Set(givenIds).size !== givenIds.length) return validationError("options", "option ids must be unique")
  return undefined
}
