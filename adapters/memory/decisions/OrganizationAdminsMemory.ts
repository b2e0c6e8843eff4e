import { Effect, Layer } from "effect"
import { OrganizationAdmins } from "../../../core/decisions/OrganizationAdmins.ts"
import { normalizeEmail } from "../../../core/kernel/Email.ts"

/** The OrganizationAdmins port in memory. */
export const OrganizationAdminsMemory = Layer.sync(OrganizationAdmins, () => {
  const admins = new Map<string, Set<string>>()
  return OrganizationAdmins.of({
    note: (organizationId, email, isAdmin) =>
      Effect.sync(() => {
        const known = admins.get(organizationId) ?? new Set<string>()
        if (isAdmin) known.add(normalizeEmail(email))
        else known.delete(normalizeEmail(email))
        admins.set(organizationId, known)
      }),
    list: (organizationId) => Effect.sync(() => [...(admins.get(organizationId) ?? [])].sort())
  })
})
