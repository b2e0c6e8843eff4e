import { organizationStatusesMigration } from "../platform/0002_organization_statuses.ts"

/** Organizations' statuses as the hub's facts told them (core/events/OrganizationStatuses.ts). */
export const organizationStatusesTables = organizationStatusesMigration("decisions", 11)
