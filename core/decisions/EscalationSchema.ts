import { Schema } from "effect"
import { Email } from "../kernel/Email.ts"
import { Decisions as L } from "../kernel/Limits.ts"

/** The most steps one ladder may have. */
export const escalationStepsMax = 10

/** The latest a step may come: a year after the decision's creation, in seconds. */
export const escalationAfterMaxSeconds = 366 * 24 * 60 * 60

/** What a step does: tell the deciders again, hand the decision on, or tell the organization's admins. */
export const EscalationAction = Schema.Literals(["remind", "route", "notify_admins"])
export type EscalationAction = typeof EscalationAction.Type

/**
 * One rung of an escalation ladder: `after` seconds from the decision's creation (durations are seconds
 * throughout the API, as `wait` is), do `action`. A `route` names where to: a role (`toRole`), a person
 * (`toEmail`), or both, as a person's route does.
 */
export const EscalationStep = Schema.Struct({
  after: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: escalationAfterMaxSeconds })).annotate({
    description: "Seconds after the decision's creation"
  }),
  action: EscalationAction,
  toRole: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(L.roleSlugMax))),
  toEmail: Schema.optionalKey(Email)
}).annotate({ identifier: "EscalationStep" })
export type EscalationStep = typeof EscalationStep.Type

/**
 * A ladder as it is given (on a decision, a template or a role): steps in increasing `after`, at most 10,
 * none at or after the decision's expiry (checked where the expiry is known).
 */
export const Escalation = Schema.Array(EscalationStep)
  .check(Schema.isMaxLength(escalationStepsMax))
  .annotate({
    description:
      "Steps in increasing `after` (seconds from creation), at most 10, none at or after `expiresAt`; each runs " +
      "once while the decision is open"
  })
export type Escalation = typeof Escalation.Type

/**
 * A step of a decision's ladder as stored and shown: when it is due (`dueAt`, creation plus `after`), and once
 * it has run, when (`ranAt`) and how it went (`outcome`: `done`, or `skipped` when its route target was gone).
 */
export const EscalationStepState = Schema.Struct({
  ...EscalationStep.fields,
  dueAt: Schema.String,
  ranAt: Schema.optionalKey(Schema.String),
  outcome: Schema.optionalKey(Schema.Literals(["done", "skipped"]))
}).annotate({ identifier: "EscalationStepState" })
export type EscalationStepState = typeof EscalationStepState.Type
