import { Schema } from "effect"
import { Email } from "../kernel/Email.ts"
import { Decisions as L } from "../kernel/Limits.ts"
import { IsoDateTime } from "../kernel/Timestamp.ts"
import { DecisionAction } from "./DecisionAction.ts"
import { QuorumCreate, QuorumState, Vote } from "./Quorum.ts"
import { Escalation, EscalationStepState } from "./EscalationSchema.ts"

/** */
export const DecisionStatus = Schema.Literals(["pending", "needs_info", "resolved", "expired", "cancelled"])
export type DecisionStatus = typeof DecisionStatus.Type

export const openStatuses: ReadonlyArray<DecisionStatus> = ["pending", "needs_info"]
export const isOpen = (status: DecisionStatus): boolean => status === "pending" || status === "needs_info"

export const Urgency = Schema.Literals(["normal", "urgent"])
export type Urgency = typeof Urgency.Type

export const Slug = Schema.String.check(
  Schema.isMaxLength(L.roleSlugMax),
  Schema.isPattern(/^[a-z0-9]+(-[a-z0-9]+)*$/, { description: "lowercase letters and digits in words joined by -" })
)

const bounded = (min: number, max: number) => Schema.String.check(Schema.isMinLength(min), Schema.isMaxLength(max))
const atMost = (max: number) => Schema.String.check(Schema.isMaxLength(max))

export const HttpsUrl = Schema.String.check(
  Schema.isMaxLength(2048),
  Schema.makeFilter((s: string) => {
    try {
      return new URL(s).protocol === "https:" || "must be an https URL"
    } catch {
      return "must be an https URL"
    }
  })
)

export const Fact = Schema.Struct({ label: bounded(1, L.factLabelMax), value: bounded(1, L.factValueMax) })
export type Fact = typeof Fact.Type

export const Link = Schema.Struct({ label: bounded(1, L.linkLabelMax), url: HttpsUrl })
export type Link = typeof Link.Type

export const OptionId = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(64))

export const DecisionOptionCreate = Schema.Struct({
  id: Schema.optionalKey(OptionId),
  label: bounded(1, L.optionLabelMax),
  description: Schema.optionalKey(atMost(L.optionDescriptionMax)),
  consequence: Schema.optionalKey(atMost(L.optionConsequenceMax)),
  default: Schema.optionalKey(Schema.Boolean)
})
export type DecisionOptionCreate = typeof DecisionOptionCreate.Type

export const DecisionOption = Schema.Struct({
  id: OptionId,
  label: Schema.String,
  description: Schema.optionalKey(Schema.String),
  consequence: Schema.optionalKey(Schema.String),
  default: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "DecisionOption" })
export type DecisionOption = typeof DecisionOption.Type

export const DecisionCreate = Schema.Struct({
  title: bounded(1, L.titleMax),
  roleSlug: Slug,
  options: Schema.Array(DecisionOptionCreate).check(Schema.isMinLength(L.optionsMin), Schema.isMaxLength(L.optionsMax)),
  // Markdown over 32,768 characters is "payload too large" (413), not a validation error, so
  // the bound is checked by the use case rather than here.
  body: Schema.optionalKey(
    Schema.String.annotate({ description: `Markdown, at most ${L.bodyMax} characters (longer is 413)` })
  ),
  facts: Schema.optionalKey(Schema.Array(Fact).check(Schema.isMaxLength(L.factsMax))),
  links: Schema.optionalKey(Schema.Array(Link).check(Schema.isMaxLength(L.linksMax))),
  urgency: Schema.optionalKey(Urgency),
  expiresAt: Schema.optionalKey(IsoDateTime),
  directAssigneeEmail: Schema.optionalKey(Email),
  quorum: Schema.optionalKey(QuorumCreate),
  /** The escalation ladder (core/decisions/Escalation.ts); absent: the template's or the role's, if any. */
  escalation: Schema.optionalKey(Escalation)
}).annotate({ identifier: "DecisionCreate" })
export type DecisionCreate = typeof DecisionCreate.Type

export const ResolutionKind = Schema.Literals(["chosen", "declined", "expired", "expired_default"])
export type ResolutionKind = typeof ResolutionKind.Type

export const expiryActor = "system:expiry"

export const Resolution = Schema.Struct({
  kind: ResolutionKind,
  optionId: Schema.optionalKey(Schema.String),
  rationale: Schema.optionalKey(Schema.String),
  decidedBy: Schema.String,
  decidedAt: Schema.String,
  /** On a decision with a quorum: the votes that resolved it (core/decisions/Quorum.ts). */
  votes: Schema.optionalKey(Schema.Array(Vote))
}).annotate({ identifier: "Resolution" })
export type Resolution = typeof Resolution.Type

export const InfoRequest = Schema.Struct({
  id: Schema.String,
  question: Schema.String,
  askedBy: Schema.String,
  askedAt: Schema.String,
  answer: Schema.optionalKey(Schema.String),
  answeredAt: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "InfoRequest" })
export type InfoRequest = typeof InfoRequest.Type

export const AssignmentChange = Schema.Struct({
  actor: Schema.String,
  at: Schema.String,
  fromRole: Schema.optionalKey(Schema.String),
  toRole: Schema.optionalKey(Schema.String),
  toEmail: Schema.optionalKey(Schema.String),
  note: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "AssignmentChange" })
export type AssignmentChange = typeof AssignmentChange.Type

/** A decision as stored. `version` counts committed changes (optimistic concurrency); it is not shown. */
export const Decision = Schema.Struct({
  id: Schema.String,
  organizationId: Schema.String,
  callerName: Schema.String,
  roleSlug: Schema.String,
  status: DecisionStatus,
  title: Schema.String,
  body: Schema.optionalKey(Schema.String),
  facts: Schema.Array(Fact),
  links: Schema.Array(Link),
  options: Schema.Array(DecisionOption),
  urgency: Urgency,
  expiresAt: Schema.optionalKey(Schema.String),
  defaultOptionId: Schema.optionalKey(Schema.String),
  directAssigneeEmail: Schema.optionalKey(Schema.String),
  resolution: Schema.optionalKey(Resolution),
  infoRequests: Schema.Array(InfoRequest),
  assignmentHistory: Schema.Array(AssignmentChange),
  /** Record actions of a raised template's options (absent on decisions without any). */
  actions: Schema.optionalKey(Schema.Array(DecisionAction)),
  /** The template the decision was raised from (absent on decisions created directly). */
  templateSlug: Schema.optionalKey(Schema.String),
  /** The quorum and its votes, on decisions that need more than one person (core/decisions/Quorum.ts). */
  quorum: Schema.optionalKey(QuorumState),
  /** The escalation ladder with each step's due time and, once run, its mark (absent on decisions without one). */
  escalation: Schema.optionalKey(Schema.Array(EscalationStepState)),
  createdAt: Schema.String,
  updatedAt: Schema.String,
  version: Schema.Int
})
export type Decision = typeof Decision.Type
