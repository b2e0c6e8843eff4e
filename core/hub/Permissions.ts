import type { Tier } from "../kernel/Manifest.ts"
import type { OrgRole } from "./Directory.ts"

/**
 * The permission model behind subject context and registry authorization. The platform contract names the parts
 * (org role, workspace-admin flag, per-service access and max scope; permission keys filtered to a
 * service's namespace and intersected with the tier) but not their shapes; these are ours:
 *
 * - A permission key is `<service>.<resource>.<verb>`; its namespace is `<service>` (everything before the
 *   first dot), so `error-monitoring.ticket.read` belongs to `error-monitoring`.
 * - The catalog below lists the keys of the platform's own services, each with the lowest tier that
 *   includes it and the roles that hold it. A key a member holds is granted only when the organization's
 *   tier reaches the key's tier: a downgrade takes the key away at once, whatever the role.
 * - Keys outside the catalog (a registered app's own `<slug>.…` keys, consented per installation) carry no
 *   tier; the role decides by verb: every role may read, members and above may write, only owners and
 *   admins may administer. An unknown verb counts as a write (fail towards the narrower grant).
 */

export const TierRanks: Readonly<Record<Tier, number>> = { free: 0, hourly: 1, monthly: 2 }

/** A higher tier includes everything of the tiers below it (free < hourly < monthly). */
export const tierAllows = (orgTier: Tier, required: Tier): boolean => TierRanks[orgTier] >= TierRanks[required]

export interface PermissionSpec {
  readonly key: string
  /** The lowest tier that includes the key. */
  readonly minTier: Tier
  readonly roles: ReadonlyArray<OrgRole>
}

const everyone: ReadonlyArray<OrgRole> = ["OWNER", "ADMIN", "MEMBER", "VIEWER"]
const members: ReadonlyArray<OrgRole> = ["OWNER", "ADMIN", "MEMBER"]
const admins: ReadonlyArray<OrgRole> = ["OWNER", "ADMIN"]

/** The platform's own permission keys (the first-party services and the subject-context callers). */
export const PermissionCatalog: ReadonlyArray<PermissionSpec> = [
  { key: "decisions.decision.read", minTier: "free", roles: everyone },
  { key: "decisions.decision.decide", minTier: "free", roles: members },
  { key: "decisions.template.manage", minTier: "hourly", roles: admins },
  { key: "decisions.role.manage", minTier: "hourly", roles: admins },
  { key: "tasks.task.read", minTier: "free", roles: everyone },
  { key: "tasks.task.write", minTier: "free", roles: members },
  { key: "tasks.task.delegate", minTier: "hourly", roles: members },
  { key: "tasks.proposal.approve", minTier: "hourly", roles: admins },
  { key: "error-monitoring.ticket.read", minTier: "free", roles: everyone },
  { key: "error-monitoring.ticket.update", minTier: "free", roles: members },
  { key: "error-monitoring.automation.manage", minTier: "hourly", roles: admins },
  { key: "error-monitoring.consumer-key.manage", minTier: "monthly", roles: admins },
  { key: "schema-analysis.source.read", minTier: "free", roles: everyone },
  { key: "schema-analysis.insight.read", minTier: "hourly", roles: everyone },
  { key: "schema-analysis.source.manage", minTier: "hourly", roles: admins },
  { key: "meeting-recaps.recap.read", minTier: "free", roles: everyone },
  { key: "meeting-recaps.recap.share", minTier: "hourly", roles: members },
  { key: "meeting-recaps.recap.manage", minTier: "monthly", roles: admins }
]

const catalogByKey: ReadonlyMap<string, PermissionSpec> = new Map(PermissionCatalog.map((spec) => [spec.key, spec]))

export const namespaceOf = (key: string): string => key.split(".")[0]!

const readVerbs = new Set(["read", "list", "view"])
const adminVerbs = new Set(["manage", "admin", "delete"])

/** Whether `role` in an organization on `tier` holds `key` (see the module comment for keys outside the catalog). */
export const holds = (role: OrgRole, tier: Tier, key: string): boolean => {
  const spec = catalogByKey.get(key)
  if (spec !== undefined) return spec.roles.includes(role) && tierAllows(tier, spec.minTier)
  const verb = key.slice(key.lastIndexOf(".") + 1)
  if (readVerbs.has(verb)) return true
  if (adminVerbs.has(verb)) return role === "OWNER" || role === "ADMIN"
  return role !== "VIEWER"
}

/** The catalog keys of one service namespace that a member holds on the organization's tier, sorted. */
export const accessPermissions = (role: OrgRole, tier: Tier, namespace: string): ReadonlyArray<string> =>
  PermissionCatalog.filter((spec) => namespaceOf(spec.key) === namespace && holds(role, tier, spec.key))
    .map((spec) => spec.key)
    .sort()

/**
 * Registry authorization's permissions: the keys the organization consented to for the app, in the app's
 * own namespace only, that the member's role (and tier, for catalog keys) allows; sorted, de-duplicated,
 * and cut to `max` so the answer always fits its schema.
 */
export const appPermissions = (input: {
  readonly consented: ReadonlyArray<string>
  readonly app: string
  readonly role: OrgRole
  readonly tier: Tier
  readonly max: number
}): ReadonlyArray<string> =>
  [...new Set(input.consented)]
    .filter((key) => namespaceOf(key) === input.app && holds(input.role, input.tier, key))
    .sort()
    .slice(0, input.max)

/** How far a member may act in a service: nothing, read, write, or administer. */
export const Scopes = ["none", "read", "write", "admin"] as const
export type Scope = (typeof Scopes)[number]

/**
 * The role's ceiling. A user without an organization works alone on their own data, so their ceiling is
 * `write` (they administer nobody).
 */
export const maxScopeOf = (role: OrgRole | null): Scope =>
  role === null ? "write" : role === "OWNER" || role === "ADMIN" ? "admin" : role === "MEMBER" ? "write" : "read"

export interface ServiceAccess {
  /** The service is live and open to the user (first-party, or installed in their organization). */
  readonly access: boolean
  /** `none` whenever `access` is false. */
  readonly maxScope: Scope
}

/** SubjectContext `permissions`. */
export interface Permissions {
  /** The role in the primary organization; null without one. */
  readonly orgRole: OrgRole | null
  /** Owners and admins administer the workspace of their organization. */
  readonly workspaceAdmin: boolean
  /** Service id -> access, for every live service. */
  readonly services: Readonly<Record<string, ServiceAccess>>
}

/** A live service as permissions see it. */
export interface AvailableService {
  readonly id: string
  readonly firstParty: boolean
}

/**
 * The user's permissions. A first-party service is open to everyone; a registered app only where the
 * organization has an active installation of it (no organization, no apps). Every service requires the
 * `free` tier: the registry stores no required tier yet, so the tier narrows permission keys, not access.
 */
export const permissionsOf = (input: {
  readonly role: OrgRole | null
  readonly services: ReadonlyArray<AvailableService>
  readonly installed: ReadonlySet<string>
}): Permissions => {
  const ceiling = maxScopeOf(input.role)
  return {
    orgRole: input.role,
    workspaceAdmin: input.role === "OWNER" || input.role === "ADMIN",
    services: Object.fromEntries(
      input.services.map((service) => {
        const access = service.firstParty || input.installed.has(service.id)
        return [service.id, { access, maxScope: access ? ceiling : "none" }]
      })
    )
  }
}
