import { Clock, Effect } from "effect"
import { isoAt } from "../kernel/Timestamp.ts"
import { normalizeEmail } from "../kernel/Email.ts"
import { NotFound } from "../kernel/Errors.ts"
import type { Tier } from "../kernel/Manifest.ts"
import type { ContextCaller } from "./ContextKeys.ts"
import {
  Directory,
  flagEnabled,
  orgStatus,
  type FlagSetting,
  type Installation,
  type MemberOfOrg,
  type OrgRole,
  type OrgUnitRef,
  type RosterEntry,
  type UserPreferences
} from "./Directory.ts"
import { accessPermissions, permissionsOf, type AvailableService, type Permissions } from "./Permissions.ts"
import { Registry } from "./Registry.ts"

/**
 * Which optional parts of SubjectContext each caller receives.
 * Each caller gets what its product needs, nothing more:
 * - error monitoring assigns tickets to teammates and gates actions: access and team;
 * - schema analysis only gates its own actions: access;
 * - the task inbox delegates to teammates and hands work to other tools: access, tool belt and team;
 * - meeting recaps route action items to attendees and their tools, and gates nothing itself: tool belt
 *   and team.
 */
export interface FieldProfile {
  readonly access: boolean
  readonly toolBelt: boolean
  readonly team: boolean
}

export const FieldProfiles: Readonly<Record<ContextCaller, FieldProfile>> = {
  "error-monitoring": { access: true, toolBelt: false, team: true },
  "schema-analysis": { access: true, toolBelt: false, team: false },
  tasks: { access: true, toolBelt: true, team: true },
  "meeting-recaps": { access: false, toolBelt: true, team: true }
}

export interface AccessClaims {
  readonly orgRole: OrgRole
  readonly departments: ReadonlyArray<string>
  readonly roles: ReadonlyArray<string>
  readonly permissions: ReadonlyArray<string>
}

export interface TeamMember {
  readonly email: string | null
  readonly name: string | null
  readonly role: OrgRole
  readonly department: OrgUnitRef | null
  readonly departmentRole: OrgUnitRef | null
}

export interface Team {
  readonly organizationId: string
  readonly name: string
  readonly members: ReadonlyArray<TeamMember>
}

export interface SubjectContext {
  readonly subject: { readonly email: string; readonly companyId?: string; readonly tier: Tier }
  readonly permissions: Permissions
  readonly access?: AccessClaims
  readonly toolBelt?: ReadonlyArray<string>
  readonly team?: Team
  readonly preferences: { readonly serviceVisible: Readonly<Record<string, boolean>> }
  readonly asOf: string
}

/**
 * The primary organization: the oldest membership in an organization that is still active. Archived,
 * merged and deleted organizations grant nothing, so a user whose only organizations are gone is a user
 * without an organization (free tier, no company id, no team).
 */
export const primaryMembership = (memberships: ReadonlyArray<MemberOfOrg>): MemberOfOrg | undefined =>
  memberships.find((m) => orgStatus(m.org) === "active")

/**
 * A roster row as the team shows it; a department role never appears without its department. An email the
 * member has not verified is nobody's proven address, so it is not handed to a service (null, as the schema
 * allows): a service would otherwise route work or notifications to an address the person may not own.
 */
export const teamMember = (entry: RosterEntry): TeamMember => ({
  email: entry.user.verified ? entry.user.email : null,
  name: entry.user.name,
  role: entry.membership.role,
  department: entry.membership.department,
  departmentRole: entry.membership.department === null ? null : entry.membership.departmentRole
})

/** Everything the context is built from, read beforehand; `build` itself is pure. */
export interface SubjectFacts {
  readonly caller: ContextCaller
  readonly email: string
  readonly primary: MemberOfOrg | undefined
  readonly roster: ReadonlyArray<RosterEntry>
  readonly installations: ReadonlyArray<Installation>
  readonly flags: ReadonlyArray<FlagSetting>
  readonly preferences: UserPreferences
  /** The live services, in id order. */
  readonly services: ReadonlyArray<AvailableService>
  readonly now: string
}

/**
 * SubjectContext for one caller. `access` appears only when the caller's profile includes it, the user
 * has an organization (the claims describe a membership) and the access-claims rollout flag is on for
 * that organization. Its permissions are the member's keys on the organization's tier in the caller's own
 * namespace. `serviceVisible` names every live service (visible unless the user hid it) plus whatever the
 * user set for services not live now.
 */
export const buildSubjectContext = (facts: SubjectFacts): SubjectContext => {
  const profile = FieldProfiles[facts.caller]
  const { primary } = facts
  const tier: Tier = primary?.org.tier ?? "free"
  const role = primary?.membership.role ?? null
  const installed = new Set(facts.installations.filter((i) => i.active).map((i) => i.serviceId))
  const permissions = permissionsOf({ role, services: facts.services, installed })
  const serviceVisible: Record<string, boolean> = {
    ...Object.fromEntries(facts.services.map((s) => [s.id, true])),
    ...facts.preferences.serviceVisible
  }
  const toolBelt = facts.services
    .filter((s) => permissions.services[s.id]?.access === true && serviceVisible[s.id] !== false)
    .map((s) => s.id)
  const claims =
    primary !== undefined && profile.access && flagEnabled(facts.flags, "access-claims", primary.org.id)
      ? {
          orgRole: primary.membership.role,
          departments: primary.membership.departments,
          roles: primary.membership.roles,
          permissions: accessPermissions(primary.membership.role, tier, facts.caller)
        }
      : undefined
  return {
    subject: { email: facts.email, ...(primary === undefined ? {} : { companyId: primary.org.id }), tier },
    permissions,
    ...(claims === undefined ? {} : { access: claims }),
    ...(profile.toolBelt ? { toolBelt } : {}),
    ...(profile.team && primary !== undefined
      ? {
          team: {
            organizationId: primary.org.id,
            name: primary.org.name,
            members: facts.roster.map(teamMember)
          }
        }
      : {}),
    preferences: { serviceVisible },
    asOf: facts.now
  }
}

/**
 * Reads what the context needs and builds it. NotFound when no workspace user has that email (the platform contract:
 * 404). The roster and installations are read only when the user has an organization.
 */
export const loadSubjectContext = Effect.fn("SubjectContext.load")(function* (caller: ContextCaller, email: string) {
  const directory = yield* Directory
  const registry = yield* Registry
  const user = yield* directory.findUserByEmail(normalizeEmail(email))
  if (user === undefined) return yield* new NotFound({ message: "No workspace user has that email." })
  const primary = primaryMembership(yield* directory.membershipsOf(user.id))
  const [roster, installations, flags, preferences, services, nowMs] = yield* Effect.all(
    [
      primary === undefined ? Effect.succeed([]) : directory.roster(primary.org.id),
      primary === undefined ? Effect.succeed([]) : directory.installationsOf(primary.org.id),
      directory.flags(),
      directory.preferences(user.id),
      registry.list(),
      Clock.currentTimeMillis
    ],
    { concurrency: "unbounded" }
  )
  return buildSubjectContext({
    caller,
    email: user.email,
    primary,
    roster,
    installations,
    flags,
    preferences,
    services: services
      .filter((s) => s.status === "live")
      .map((s) => ({ id: s.id, firstParty: s.firstParty }))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
    now: isoAt(nowMs)
  })
})
