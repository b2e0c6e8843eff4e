import { Context, type Effect } from "effect"

/**
 * The admins of each organization as the workspace plane shows them: every identity token names its user's
 * `orgRole`, so a request of an OWNER or ADMIN notes them here and a request that shows someone is no longer
 * one removes them. The decisions service keeps no directory of its own; this is whom it tells when a
 * decision is unrouted or a record action is dead-lettered (docs/notifications.md). Someone never seen on
 * the workspace plane is not known. Infrastructure failures are defects.
 */
export class OrganizationAdmins extends Context.Service<
  OrganizationAdmins,
  {
    /** What a verified identity token showed of `email` in `organizationId` at `atIso`. */
    readonly note: (organizationId: string, email: string, isAdmin: boolean, atIso: string) => Effect.Effect<void>
    /** The organization's admins, by email. */
    readonly list: (organizationId: string) => Effect.Effect<ReadonlyArray<string>>
  }
>()("core/decisions/OrganizationAdmins") {}
