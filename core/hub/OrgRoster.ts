import { Effect } from "effect"
import { NotFound } from "../kernel/Errors.ts"
import { Directory, orgStatus, type OrgStatus, type RosterEntry } from "./Directory.ts"

/** A member as the roster answers it: lower-case roles, and only members with a verified email. */
export const RosterRoles = ["owner", "admin", "member", "viewer"] as const
export type RosterRole = (typeof RosterRoles)[number]

export interface RosterMember {
  readonly email: string
  readonly name: string | null
  readonly role: RosterRole
}

export interface OrgRoster {
  readonly org: {
    readonly id: string
    readonly status: OrgStatus
    readonly name: string | null
    readonly archivedAt: string | null
    readonly mergedIntoOrgId: string | null
  }
  readonly members: ReadonlyArray<RosterMember>
}

/**
 * A roster row as a reconciling service may copy it, or nothing: an address the member has not verified is
 * nobody's proven address, so a service would otherwise give access to whoever typed it.
 */
const rosterMember = (entry: RosterEntry): RosterMember | undefined =>
  entry.user.verified
    ? {
        email: entry.user.email,
        name: entry.user.name,
        role: entry.membership.role.toLowerCase() as RosterRole
      }
    : undefined

/**
 * An organization's lifecycle state and members, for a service that reconciles its own copy of membership
 * (the `crm` caller). The status is the directory's precedence (deleted, then merged, then archived, then
 * active); a deleted organization has no members whatever rows remain. An organization that never existed is
 * NotFound, so a mistyped id is never read as "deleted" by a reconciler.
 */
export const loadOrgRoster = Effect.fn("OrgRoster.load")(function* (orgId: string) {
  const directory = yield* Directory
  const org = yield* directory.findOrg(orgId)
  if (org === undefined) return yield* new NotFound({ message: "No organization has that id." })
  const status = orgStatus(org)
  const members =
    status === "deleted"
      ? []
      : (yield* directory.roster(org.id)).flatMap((entry) => {
          const member = rosterMember(entry)
          return member === undefined ? [] : [member]
        })
  return {
    org: {
      id: org.id,
      status,
      name: org.name.length === 0 ? null : org.name,
      archivedAt: org.archivedAt,
      mergedIntoOrgId: org.mergedIntoOrgId
    },
    members
  } satisfies OrgRoster
})
