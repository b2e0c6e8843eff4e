import { Effect, Layer } from "effect"
import { OrganizationStatuses, type OrganizationStatusNotice } from "../../core/events/OrganizationStatuses.ts"
import { normalizeEmail } from "../../core/kernel/Email.ts"
import { epochMs } from "../../core/kernel/Timestamp.ts"

/** The OrganizationStatuses port in memory (one process). */
export const OrganizationStatusesMemory = Layer.sync(OrganizationStatuses, () => {
  const statuses = new Map<string, OrganizationStatusNotice>()
  // email -> the organizations they were heard of as a member of
  const memberships = new Map<string, Set<string>>()
  const suspended = (organizationId: string) => {
    const status = statuses.get(organizationId)?.status
    return status !== undefined && status !== "active"
  }
  return OrganizationStatuses.of({
    record: (notice) =>
      Effect.sync(() => {
        const kept = statuses.get(notice.organizationId)
        if (kept === undefined || epochMs(kept.changedAt) <= epochMs(notice.changedAt)) {
          statuses.set(notice.organizationId, notice)
        }
        const email = normalizeEmail(notice.email)
        const orgs = memberships.get(email) ?? new Set<string>()
        orgs.add(notice.organizationId)
        memberships.set(email, orgs)
      }),
    organizationSuspended: (organizationId) => Effect.sync(() => suspended(organizationId)),
    personSuspended: (email) =>
      Effect.sync(() => {
        const orgs = [...(memberships.get(normalizeEmail(email)) ?? [])]
        return orgs.length > 0 && orgs.every(suspended)
      })
  })
})
