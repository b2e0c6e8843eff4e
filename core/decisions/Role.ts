import { Schema } from "effect"
import { Email } from "../kernel/Email.ts"
import { Decisions as L } from "../kernel/Limits.ts"
import { Slug } from "./Decision.ts"
import { Escalation } from "./EscalationSchema.ts"

/** The decisions contract, "Role", "RoleCreate", "Assignment". */
export const Role = Schema.Struct({
  id: Schema.String,
  slug: Schema.String,
  name: Schema.String,
  description: Schema.optionalKey(Schema.String),
  memberCount: Schema.Int,
  createdAt: Schema.String,
  archivedAt: Schema.optionalKey(Schema.String),
  /** The escalation ladder of its decisions that are created without one of their own. */
  escalation: Schema.optionalKey(Escalation)
}).annotate({ identifier: "Role" })
export type Role = typeof Role.Type

export const RoleCreate = Schema.Struct({
  slug: Slug,
  name: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(L.roleNameMax)),
  description: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(L.roleDescriptionMax))),
  escalation: Schema.optionalKey(Escalation)
}).annotate({ identifier: "RoleCreate" })
export type RoleCreate = typeof RoleCreate.Type

export const RoleUpdate = Schema.Struct({
  name: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(L.roleNameMax))),
  description: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMaxLength(L.roleDescriptionMax)))),
  /** Replaces the role's default ladder; null removes it. */
  escalation: Schema.optionalKey(Schema.NullOr(Escalation))
}).annotate({ identifier: "RoleUpdate" })
export type RoleUpdate = typeof RoleUpdate.Type

export const Assignment = Schema.Struct({
  memberEmail: Schema.String,
  addedBy: Schema.String,
  addedAt: Schema.String
}).annotate({ identifier: "Assignment" })
export type Assignment = typeof Assignment.Type

export const AssignmentCreate = Schema.Struct({ memberEmail: Email }).annotate({ identifier: "AssignmentCreate" })
