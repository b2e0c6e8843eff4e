import { isEmail, normalizeEmail } from "../kernel/Email.ts"
import { ValidationError } from "../kernel/Errors.ts"
import { bodyIssue } from "../kernel/FieldIssue.ts"
import { Hub } from "../kernel/Limits.ts"
import { Tier } from "../kernel/Manifest.ts"
import {
  OrgRoles,
  orgStatus,
  type Consents,
  type Installation,
  type Membership,
  type OrgRole,
  type OrgUnitRef,
  type Organization
} from "./Directory.ts"

/**
 * The rules of the operator's identity and entitlements (core/hub/Identity.ts): names, tiers, roles, emails,
 * membership and organization patches, app installations with their epoch. Pure functions, tested without a
 * store.
 */

export const orgNameMax = 200
export const userNameMax = 200
export const unitIdMax = 64
export const unitNameMax = 120
export const slugMax = 64
const slugPattern = /^[a-z0-9]+(-[a-z0-9]+)*$/

/** A refusal of one field of the request body, the message naming it. */
export const invalid = (field: string, message: string) =>
  new ValidationError({ message, details: [bodyIssue(field, message)] })

/** A trimmed, non-empty name of at most `max` characters. */
export const checkName = (field: string, value: string, max: number): string | ValidationError => {
  const trimmed = value.trim()
  return trimmed.length === 0 || trimmed.length > max
    ? invalid(field, `${field} must be 1 to ${max} characters.`)
    : trimmed
}

export const checkTier = (value: string): Tier | ValidationError =>
  (Tier.literals as ReadonlyArray<string>).includes(value)
    ? (value as Tier)
    : invalid("tier", `tier must be one of ${Tier.literals.join(", ")}.`)

export const checkRole = (value: string): OrgRole | ValidationError =>
  (OrgRoles as ReadonlyArray<string>).includes(value)
    ? (value as OrgRole)
    : invalid("role", `role must be one of ${OrgRoles.join(", ")}.`)

/** Emails are compared trimmed and case-insensitively. */
export const checkEmail = (value: string): string | ValidationError => {
  const email = normalizeEmail(value)
  return isEmail(email) ? email : invalid("email", "email must be an email address.")
}

const isSlug = (value: string) => value.length <= slugMax && slugPattern.test(value)

const checkUnit = (field: string, unit: OrgUnitRef): OrgUnitRef | ValidationError => {
  if (unit.id.length === 0 || unit.id.length > unitIdMax)
    return invalid(field, `${field}.id must be 1 to ${unitIdMax} characters.`)
  if (!isSlug(unit.slug)) return invalid(field, `${field}.slug must be lowercase letters and digits joined by -.`)
  const name = checkName(`${field}.name`, unit.name, unitNameMax)
  return typeof name === "string" ? { id: unit.id, slug: unit.slug, name } : name
}

/** A slug list: each a slug, duplicates dropped (first kept), at most `max`. */
const checkSlugs = (field: string, values: ReadonlyArray<string>, max: number) => {
  const bad = values.find((value) => !isSlug(value))
  if (bad !== undefined) return invalid(field, `${field} must hold slugs: lowercase letters and digits joined by -.`)
  const unique = [...new Set(values)]
  return unique.length > max ? invalid(field, `${field} may hold at most ${max} slugs.`) : unique
}

/** A unit field of a patch: absent keeps the current one, null clears it, a value is checked. */
const patchUnit = (field: string, current: OrgUnitRef | null, patched: OrgUnitRef | null | undefined) =>
  patched === undefined ? current : patched === null ? null : checkUnit(field, patched)

export interface MemberPatch {
  readonly role?: string | undefined
  readonly department?: OrgUnitRef | null | undefined
  readonly departmentRole?: OrgUnitRef | null | undefined
  readonly departments?: ReadonlyArray<string> | undefined
  readonly roles?: ReadonlyArray<string> | undefined
}

/**
 * A membership with a patch applied: an absent field is kept, `null` clears a unit. The primary department
 * is always among `departments` (added when missing), and a department role without a department is refused
 * rather than guessed (core/hub/Directory.ts Membership).
 */
export const patchMembership = (current: Membership, patch: MemberPatch): Membership | ValidationError => {
  const role = patch.role === undefined ? current.role : checkRole(patch.role)
  if (typeof role !== "string") return role
  const department = patchUnit("department", current.department, patch.department)
  if (department instanceof ValidationError) return department
  const departmentRole = patchUnit("departmentRole", current.departmentRole, patch.departmentRole)
  if (departmentRole instanceof ValidationError) return departmentRole
  if (departmentRole !== null && department === null) {
    return invalid("departmentRole", "departmentRole needs a department.")
  }
  const listed = patch.departments ?? current.departments
  const departments = checkSlugs(
    "departments",
    department === null || listed.includes(department.slug) ? listed : [department.slug, ...listed],
    Hub.registryDeptSlugsMax
  )
  if (departments instanceof ValidationError) return departments
  const roles = checkSlugs("roles", patch.roles ?? current.roles, Hub.registryRoleSlugsMax)
  if (roles instanceof ValidationError) return roles
  return { ...current, role, department, departmentRole, departments, roles }
}

export interface InstallationGrant {
  readonly consents: Consents
  /** Permission keys in the app's namespace (`<serviceId>.…`), at most 16. */
  readonly permissions: ReadonlyArray<string>
}

const permissionPattern = /^[a-z0-9]+(\.[a-z0-9_-]+)+$/

export const checkPermissions = (
  serviceId: string,
  permissions: ReadonlyArray<string>
): ReadonlyArray<string> | ValidationError => {
  const foreign = permissions.find(
    (key) => key.length > 128 || !permissionPattern.test(key) || !key.startsWith(`${serviceId}.`)
  )
  if (foreign !== undefined) {
    return invalid("permissions", `permissions must be keys in the app's namespace (${serviceId}.…).`)
  }
  const unique = [...new Set(permissions)]
  return unique.length > Hub.registryPermissionsMax
    ? invalid("permissions", `permissions may hold at most ${Hub.registryPermissionsMax} keys.`)
    : unique
}

/**
 * Installing, or re-consenting an active installation. A re-consent moves the epoch to now, so every token
 * issued at or before it stops working for the app. A first install starts
 * at epoch 0; a reinstall keeps the epoch its uninstall set, so tokens from before the uninstall stay dead.
 */
export const installOrReconsent = (
  existing: Installation | undefined,
  target: { readonly orgId: string; readonly serviceId: string },
  grant: InstallationGrant,
  now: { readonly seconds: number; readonly iso: string }
): Installation => ({
  orgId: target.orgId,
  serviceId: target.serviceId,
  active: true,
  epoch: existing === undefined ? 0 : existing.active ? now.seconds : existing.epoch,
  consents: grant.consents,
  permissions: grant.permissions,
  updatedAt: now.iso
})

/** An uninstall keeps the consents for the record and moves the epoch to now. */
export const uninstalled = (
  installation: Installation,
  now: { readonly seconds: number; readonly iso: string }
): Installation => ({ ...installation, active: false, epoch: now.seconds, updatedAt: now.iso })

/** Merging into another organization: not into itself, and not into one that is itself gone. */
export const checkMergeTarget = (org: Organization, target: Organization | undefined): ValidationError | undefined => {
  if (target === undefined) return invalid("mergedIntoOrgId", "mergedIntoOrgId must name an existing organization.")
  if (target.id === org.id) return invalid("mergedIntoOrgId", "An organization cannot be merged into itself.")
  const status = orgStatus(target)
  return status === "merged" || status === "deleted"
    ? invalid("mergedIntoOrgId", `mergedIntoOrgId names an organization that is ${status}.`)
    : undefined
}

/** An operator's change to an organization; every field is optional and an absent one is kept. */
export interface OrgPatch {
  readonly tier?: string | undefined
  readonly archived?: boolean | undefined
  /** Merges into that organization; null undoes a merge. */
  readonly mergedIntoOrgId?: string | null | undefined
  /** Deletes the organization for good (its roster is emptied). */
  readonly deleted?: true | undefined
}

/**
 * The organization with a patch applied, or the first reason it is refused. Everything is checked before
 * anything is written, so a refused patch changes nothing (a valid tier beside a bad merge target is not
 * half applied). `target` is the organization `mergedIntoOrgId` names, read beforehand.
 */
export const patchOrg = (
  org: Organization,
  patch: OrgPatch,
  target: Organization | undefined,
  iso: string
): Organization | ValidationError => {
  const tier = patch.tier === undefined ? org.tier : checkTier(patch.tier)
  if (tier instanceof ValidationError) return tier
  if (typeof patch.mergedIntoOrgId === "string") {
    const refused = checkMergeTarget(org, target)
    if (refused !== undefined) return refused
  }
  return {
    ...org,
    tier,
    archivedAt: patch.archived === undefined ? org.archivedAt : patch.archived ? (org.archivedAt ?? iso) : null,
    mergedIntoOrgId: patch.mergedIntoOrgId === undefined ? org.mergedIntoOrgId : patch.mergedIntoOrgId,
    deletedAt: patch.deleted === true ? (org.deletedAt ?? iso) : org.deletedAt
  }
}
