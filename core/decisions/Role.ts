import { Schema } from "effect"
import { Email } from "../kernel/Email.ts"
import { Decisions as L } from "../kernel/Limits.ts"
import { Slug } from "./Decision.ts"

/** The decisions contract, "Role", "RoleCreate", "Assignment". */
export const Role = Schema.Struct({
  id: Schema.String,
  slug: Schema.String,
  name: Schema.String,
  description: Schema.optionalKey(Schema.String),
  memberCount: Schema.Int,
  createdAt: Schema.String,
  archivedAt: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "Role" })
export type Role = typeof Role.Type

export const RoleCreate = Schema.Struct({
  slug: Slug,
  name: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(L.roleNameMax)),
  description: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(L.roleDescriptionMax)))
}).annotate({ identifier: "RoleCreate" })
export type RoleCreate = typeof RoleCreate.Type

export const RoleUpdate = Schema.Struct({
  name: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(L.roleNameMax))),
  description: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMaxLength(L.roleDescriptionMax))))
}).annotate({ identifier: "RoleUpdate" })
export type RoleUpdate = typeof RoleUpdate.Type

export const Assignment = Schema.Struct({
  memberEmail: Schema.String,
  addedBy: Schema.String,
  addedAt: Schema.String
}).annotate({ identifier: "Assignment" })
export type Assignment = typeof Assignment.Type

export const AssignmentCreate = Schema.Struct({ memberEmail: Email }).annotate({ identifier: "AssignmentCreate" })
