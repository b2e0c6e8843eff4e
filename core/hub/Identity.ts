import { Clock, Context, Effect, Layer } from "effect"
import { isoAt } from "../kernel/Timestamp.ts"
import { isEmail, normalizeEmail } from "../kernel/Email.ts"
import { Conflict, NotFound, ValidationError } from "../kernel/Errors.ts"
import { IdGenerator } from "../kernel/Ids.ts"
import { Hub } from "../kernel/Limits.ts"
import { Tier } from "../kernel/Manifest.ts"
import {
  Directory,
  FlagNames,
  OrgRoles,
  orgStatus,
  type Consents,
  type FlagName,
  type FlagSetting,
  type Installation,
  type Membership,
  type OrgRole,
  type OrgStatus,
  type OrgUnitRef,
  type Organization,
  type RosterEntry,
  type User
} from "./Directory.ts"
import { ServiceStore } from "./ServiceStore.ts"

/**
 * The operator's identity and entitlements use cases: organizations
 * and their status, users, memberships, app installations with their epoch, feature flags. The rules are
 * pure functions below the service, so they are tested without a store.
 */

export const orgNameMax = 200
export const userNameMax = 200
export const unitIdMax = 64
export const unitNameMax = 120
export const slugMax = 64
const slugPattern = /^[a-z0-9]+(-[a-z0-9]+)*$/

const invalid = (field: string, message: string) => new ValidationError({ message, details: { field } })

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

export interface OrgView {
  readonly org: Organization
  readonly status: OrgStatus
  readonly roster: ReadonlyArray<RosterEntry>
  readonly installations: ReadonlyArray<Installation>
}

export interface OrgCreate {
  readonly name: string
  readonly tier?: string | undefined
}

export interface UserCreate {
  readonly email: string
  readonly name?: string | null | undefined
  readonly verified?: boolean | undefined
}

export interface FlagSet {
  readonly name: string
  readonly enabled: boolean
  readonly orgId?: string | undefined
}

export class Identity extends Context.Service<
  Identity,
  {
    readonly createOrg: (input: OrgCreate) => Effect.Effect<Organization, ValidationError>
    readonly getOrg: (orgId: string) => Effect.Effect<OrgView, NotFound>
    /**
     * Tier, archive or unarchive, merge or undo a merge, delete: all of a patch or none of it (`patchOrg`).
     * A deleted organization is deleted whatever else it was: its roster is emptied (Directory `orgStatus`).
     */
    readonly updateOrg: (orgId: string, patch: OrgPatch) => Effect.Effect<Organization, NotFound | ValidationError>

    readonly createUser: (input: UserCreate) => Effect.Effect<User, ValidationError | Conflict>

    /** Conflict when the user is already a member, or the organization is deleted. */
    readonly addMember: (
      orgId: string,
      input: { readonly email: string; readonly role: string }
    ) => Effect.Effect<RosterEntry, NotFound | Conflict | ValidationError>
    readonly updateMember: (
      orgId: string,
      email: string,
      patch: MemberPatch
    ) => Effect.Effect<RosterEntry, NotFound | ValidationError>
    readonly removeMember: (orgId: string, email: string) => Effect.Effect<void, NotFound>

    /** Installs a registered app, or re-consents when it is installed (see `installOrReconsent`). */
    readonly install: (
      orgId: string,
      serviceId: string,
      grant: InstallationGrant
    ) => Effect.Effect<Installation, NotFound | Conflict | ValidationError>
    /** NotFound when the app is not installed (never installed, or already uninstalled). */
    readonly uninstall: (orgId: string, serviceId: string) => Effect.Effect<Installation, NotFound>

    readonly setFlag: (input: FlagSet) => Effect.Effect<FlagSetting, NotFound | ValidationError>
  }
>()("core/hub/Identity") {
  static readonly layer: Layer.Layer<Identity, never, Directory | ServiceStore | IdGenerator> = Layer.effect(
    Identity,
    Effect.gen(function* () {
      const directory = yield* Directory
      const services = yield* ServiceStore
      const ids = yield* IdGenerator
      const now = Effect.map(Clock.currentTimeMillis, (ms) => ({
        seconds: Math.floor(ms / 1000),
        iso: isoAt(ms)
      }))
      const valid = <A>(value: A | ValidationError): Effect.Effect<A, ValidationError> =>
        value instanceof ValidationError ? Effect.fail(value) : Effect.succeed(value as A)

      const loadOrg = (orgId: string) =>
        Effect.flatMap(directory.findOrg(orgId), (org) =>
          org === undefined ? Effect.fail(new NotFound({ message: "No such organization." })) : Effect.succeed(org)
        )
      /** A deleted organization keeps its row for the record, but takes no new members or apps. */
      const loadLiveOrg = (orgId: string) =>
        Effect.flatMap(loadOrg(orgId), (org) =>
          orgStatus(org) === "deleted"
            ? Effect.fail(new Conflict({ message: "The organization is deleted." }))
            : Effect.succeed(org)
        )
      const loadUser = (email: string) =>
        Effect.flatMap(directory.findUserByEmail(normalizeEmail(email)), (user) =>
          user === undefined ? Effect.fail(new NotFound({ message: "No such user." })) : Effect.succeed(user)
        )
      const loadMember = (orgId: string, email: string) =>
        Effect.gen(function* () {
          yield* loadOrg(orgId)
          const user = yield* loadUser(email)
          const entry = (yield* directory.roster(orgId)).find((e) => e.user.id === user.id)
          if (entry === undefined) return yield* Effect.fail(new NotFound({ message: "No such member." }))
          return entry
        })

      return Identity.of({
        createOrg: (input) =>
          Effect.gen(function* () {
            const name = yield* valid(checkName("name", input.name, orgNameMax))
            const tier = yield* valid(checkTier(input.tier ?? "free"))
            const org: Organization = {
              id: `org_${(yield* ids.next).toLowerCase()}`,
              name,
              tier,
              createdAt: (yield* now).iso,
              archivedAt: null,
              mergedIntoOrgId: null,
              deletedAt: null
            }
            yield* directory.createOrg(org)
            return org
          }),

        getOrg: (orgId) =>
          Effect.gen(function* () {
            const org = yield* loadOrg(orgId)
            return {
              org,
              status: orgStatus(org),
              roster: yield* directory.roster(orgId),
              installations: yield* directory.installationsOf(orgId)
            }
          }),

        updateOrg: (orgId, patch) =>
          Effect.gen(function* () {
            const org = yield* loadOrg(orgId)
            const target =
              typeof patch.mergedIntoOrgId === "string" ? yield* directory.findOrg(patch.mergedIntoOrgId) : undefined
            const next = yield* valid(patchOrg(org, patch, target, (yield* now).iso))
            if (patch.deleted === true) {
              for (const entry of yield* directory.roster(orgId)) yield* directory.removeMember(orgId, entry.user.id)
            }
            yield* directory.updateOrg(next)
            return next
          }),

        createUser: (input) =>
          Effect.gen(function* () {
            const email = yield* valid(checkEmail(input.email))
            const name =
              input.name === undefined || input.name === null
                ? null
                : yield* valid(checkName("name", input.name, userNameMax))
            const user: User = {
              id: yield* ids.next,
              email,
              name,
              verified: input.verified ?? false,
              createdAt: (yield* now).iso
            }
            if ((yield* directory.createUser(user)) === "email_taken") {
              return yield* Effect.fail(new Conflict({ message: "A user with this email already exists." }))
            }
            return user
          }),

        addMember: (orgId, input) =>
          Effect.gen(function* () {
            const role = yield* valid(checkRole(input.role))
            const email = yield* valid(checkEmail(input.email))
            yield* loadLiveOrg(orgId)
            const user = yield* loadUser(email)
            const membership: Membership = {
              orgId,
              userId: user.id,
              role,
              department: null,
              departmentRole: null,
              departments: [],
              roles: [],
              createdAt: (yield* now).iso
            }
            if ((yield* directory.addMember(membership)) === "already_member") {
              return yield* Effect.fail(new Conflict({ message: "The user is already a member of this organization." }))
            }
            return { user, membership }
          }),

        updateMember: (orgId, email, patch) =>
          Effect.gen(function* () {
            const entry = yield* loadMember(orgId, email)
            const membership = yield* valid(patchMembership(entry.membership, patch))
            if (!(yield* directory.updateMember(membership))) {
              return yield* Effect.fail(new NotFound({ message: "No such member." }))
            }
            return { user: entry.user, membership }
          }),

        removeMember: (orgId, email) =>
          Effect.gen(function* () {
            const entry = yield* loadMember(orgId, email)
            yield* directory.removeMember(orgId, entry.user.id)
          }),

        install: (orgId, serviceId, grant) =>
          Effect.gen(function* () {
            yield* loadLiveOrg(orgId)
            if ((yield* services.find(serviceId)) === undefined) {
              return yield* Effect.fail(new NotFound({ message: "No such service." }))
            }
            const permissions = yield* valid(checkPermissions(serviceId, grant.permissions))
            const existing = yield* directory.findInstallation(orgId, serviceId)
            const next = installOrReconsent(existing, { orgId, serviceId }, { ...grant, permissions }, yield* now)
            yield* directory.saveInstallation(next)
            return next
          }),

        uninstall: (orgId, serviceId) =>
          Effect.gen(function* () {
            yield* loadOrg(orgId)
            const existing = yield* directory.findInstallation(orgId, serviceId)
            if (existing === undefined || !existing.active) {
              return yield* Effect.fail(new NotFound({ message: "The app is not installed." }))
            }
            const next = uninstalled(existing, yield* now)
            yield* directory.saveInstallation(next)
            return next
          }),

        setFlag: (input) =>
          Effect.gen(function* () {
            if (!(FlagNames as ReadonlyArray<string>).includes(input.name)) {
              return yield* Effect.fail(invalid("name", `name must be one of ${FlagNames.join(", ")}.`))
            }
            if (input.orgId !== undefined) yield* loadOrg(input.orgId)
            const setting: FlagSetting = {
              name: input.name as FlagName,
              orgId: input.orgId ?? null,
              enabled: input.enabled
            }
            yield* directory.setFlag(setting)
            return setting
          })
      })
    })
  )
}
