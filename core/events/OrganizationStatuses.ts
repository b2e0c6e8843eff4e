import { Context, type Effect } from "effect"
import type { OrganizationStatus } from "../kernel/Facts.ts"

/** One `organization.status.changed` fact as a service keeps it: the organization's status, and one member. */
export interface OrganizationStatusNotice {
  readonly organizationId: string
  /** Normalised (trimmed, lower case). */
  readonly email: string
  readonly status: OrganizationStatus
  readonly changedAt: string
}

/**
 * What a service learned from the hub of organizations' statuses (the `organization.status.changed` fact),
 * kept in its own database so every instance answers alike. An organization is suspended while the newest
 * status heard of it is anything but `active`; one never heard of is active. A person is suspended while
 * every organization they were heard of as a member of is suspended; someone never heard of is not.
 *
 * A fact older than the one kept (by `changedAt`) changes nothing: retries may arrive out of order. The
 * reads answer every change as soon as it is recorded, on every instance. Infrastructure failures are defects.
 */
export class OrganizationStatuses extends Context.Service<
  OrganizationStatuses,
  {
    /** Inside the unit of work that accepts the fact. */
    readonly record: (notice: OrganizationStatusNotice) => Effect.Effect<void>
    readonly organizationSuspended: (organizationId: string) => Effect.Effect<boolean>
    readonly personSuspended: (email: string) => Effect.Effect<boolean>
  }
>()("core/events/OrganizationStatuses") {}
