import { Context, Effect } from "effect"
import type { EscalationStep } from "./EscalationSchema.ts"
import type { Assignment, Role } from "./Role.ts"

export interface NewRole {
  readonly id: string
  readonly organizationId: string
  readonly slug: string
  readonly name: string
  readonly description?: string | undefined
  readonly createdAt: string
  readonly escalation?: ReadonlyArray<EscalationStep> | undefined
}

export interface RoleWithHolders {
  readonly role: Role
  readonly holders: ReadonlyArray<string>
}

/**
 * Decision roles and who holds them, per organization. Slugs are unique per organization; emails are
 * stored normalised. `create` answers false when the slug is taken; `assign` is idempotent.
 */
export class RoleStore extends Context.Service<
  RoleStore,
  {
    readonly list: (organizationId: string) => Effect.Effect<ReadonlyArray<Role>>
    readonly get: (organizationId: string, slug: string) => Effect.Effect<Role | undefined>
    readonly create: (role: NewRole) => Effect.Effect<boolean>
    readonly update: (
      organizationId: string,
      slug: string,
      patch: {
        readonly name?: string | undefined
        readonly description?: string | null | undefined
        /** The role's default escalation ladder: absent keeps it, null removes it. */
        readonly escalation?: ReadonlyArray<EscalationStep> | null | undefined
      }
    ) => Effect.Effect<Role | undefined>
    readonly archive: (organizationId: string, slug: string, at: string) => Effect.Effect<Role | undefined>
    readonly assignments: (organizationId: string, slug: string) => Effect.Effect<ReadonlyArray<Assignment>>
    /** The role and the emails of its holders (in `assignments` order), read at once; undefined when missing. */
    readonly getWithHolders: (organizationId: string, slug: string) => Effect.Effect<RoleWithHolders | undefined>
    readonly assign: (organizationId: string, slug: string, assignment: Assignment) => Effect.Effect<void>
    /**
     * Removes a holder; answers false when they did not hold the role. Inside a unit of work it holds the role
     * against other removals until the unit ends, so a unit that removes a holder and then counts the rest
     * sees every removal committed before it (the last holder's removal is never missed).
     */
    readonly unassign: (organizationId: string, slug: string, email: string) => Effect.Effect<boolean>
    /** Slugs of the active (not archived) roles this email holds. */
    readonly heldBy: (organizationId: string, email: string) => Effect.Effect<ReadonlyArray<string>>
  }
>()("core/decisions/RoleStore") {}
