import {
  organizationStatusChanged,
  subjectTierChanged,
  type Fact,
  type FactName,
  type OrganizationStatus
} from "../kernel/Facts.ts"
import type { Tier } from "../kernel/Manifest.ts"
import { orgStatus, type MemberOfOrg, type Organization } from "./Directory.ts"
import type { RegisteredService } from "./ServiceStore.ts"
import { primaryMembership } from "./SubjectContext.ts"

/** One fact for one service: a row of the hub's fact outbox. */
export interface FactForService {
  readonly service: string
  readonly fact: Fact
}

/** A member of the organization that changed, with every membership of theirs (as before the change). */
export interface ChangedMember {
  readonly email: string
  readonly memberships: ReadonlyArray<MemberOfOrg>
}

export interface OrganizationChange {
  readonly before: Organization
  readonly after: Organization
  /** Its members, as they were before the change (a deleted organization's roster is emptied by it). */
  readonly members: ReadonlyArray<ChangedMember>
  readonly services: ReadonlyArray<RegisteredService>
  readonly changedAt: string
}

/** The services a fact goes to: the live ones whose manifest declares it. */
export const consumersOf = (services: ReadonlyArray<RegisteredService>, fact: FactName): ReadonlyArray<string> =>
  services.filter((s) => s.status === "live" && (s.consumesFacts ?? []).includes(fact)).map((s) => s.id)

/** The person's tier and where it comes from, over their memberships (as subject context answers it). */
const tierOf = (memberships: ReadonlyArray<MemberOfOrg>): { readonly tier: Tier; readonly orgId: string | null } => {
  const primary = primaryMembership(memberships)
  return primary === undefined ? { tier: "free", orgId: null } : { tier: primary.org.tier, orgId: primary.org.id }
}

const withOrg = (memberships: ReadonlyArray<MemberOfOrg>, org: Organization) =>
  memberships.map((m) => (m.org.id === org.id ? { ...m, org } : m))

/**
 * What a change of one person's memberships (joining or leaving an organization) tells the services: their
 * tier, when it changed (`subject.tier.changed`, as `organizationFacts` words it). Pure.
 */
export const membershipFacts = (change: {
  readonly email: string
  readonly before: ReadonlyArray<MemberOfOrg>
  readonly after: ReadonlyArray<MemberOfOrg>
  readonly services: ReadonlyArray<RegisteredService>
  readonly changedAt: string
}): ReadonlyArray<FactForService> => {
  const was = tierOf(change.before)
  const now = tierOf(change.after)
  if (was.tier === now.tier) return []
  return consumersOf(change.services, subjectTierChanged).map((service) => ({
    service,
    fact: {
      fact: subjectTierChanged,
      subject: { email: change.email, ...(now.orgId === null ? {} : { companyId: now.orgId }) },
      data: { organizationId: now.orgId, tier: now.tier, changedAt: change.changedAt }
    }
  }))
}

/**
 * What an organization's change tells the services, one fact per person and service. Its status changed
 * (active, archived, merged, deleted): `organization.status.changed` about each member. A member's tier
 * changed (the organization's tier, or it is no longer, or is again, their first active organization):
 * `subject.tier.changed` about them, with the tier and organization subject context now answers for them. Only to the live services whose
 * manifest declares the fact; nothing when nothing a fact describes changed. Pure.
 */
export const organizationFacts = (change: OrganizationChange): ReadonlyArray<FactForService> => {
  const { before, after, members, changedAt } = change
  const out: Array<FactForService> = []
  const status: OrganizationStatus = orgStatus(after)
  if (orgStatus(before) !== status) {
    for (const service of consumersOf(change.services, organizationStatusChanged)) {
      for (const member of members) {
        out.push({
          service,
          fact: {
            fact: organizationStatusChanged,
            subject: { email: member.email, companyId: after.id },
            data: { organizationId: after.id, status, changedAt }
          }
        })
      }
    }
  }
  const tierConsumers = consumersOf(change.services, subjectTierChanged)
  if (tierConsumers.length > 0) {
    for (const member of members) {
      const was = tierOf(withOrg(member.memberships, before))
      const now = tierOf(withOrg(member.memberships, after))
      if (was.tier === now.tier) continue
      for (const service of tierConsumers) {
        out.push({
          service,
          fact: {
            fact: subjectTierChanged,
            subject: { email: member.email, ...(now.orgId === null ? {} : { companyId: now.orgId }) },
            data: { organizationId: now.orgId, tier: now.tier, changedAt }
          }
        })
      }
    }
  }
  return out
}
