import { Schema } from "effect"
import { Email } from "./Email.ts"
import { Tier } from "./Manifest.ts"
import { IsoDateTime } from "./Timestamp.ts"

/**
 * Facts: what the hub tells a service about the people and organizations it serves, when that changes. The
 * hub sends a fact to `POST /api/v1/facts` of each live service whose manifest names it in `consumesFacts`,
 * signed as an event is (AUTH-2, with that service's signing key), one fact per person concerned.
 */

/** An organization's status changed; `data` is OrganizationStatusChanged, the subject one of its members. */
export const organizationStatusChanged = "organization.status.changed"
/** A person's tier changed (the tier of their first organization, as subject context answers it). */
export const subjectTierChanged = "subject.tier.changed"

export const FactNames = [organizationStatusChanged, subjectTierChanged] as const
export type FactName = (typeof FactNames)[number]

export const isFactName = (name: string): name is FactName => (FactNames as ReadonlyArray<string>).includes(name)

const bounded = (max: number) => Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(max))

/** The request body of `POST /api/v1/facts`. */
export const FactBody = Schema.Struct({
  fact: bounded(200),
  subject: Schema.Struct({ email: Email, companyId: Schema.optionalKey(bounded(64)) }),
  data: Schema.Record(Schema.String, Schema.Unknown)
}).annotate({ identifier: "Fact" })
export type FactBody = typeof FactBody.Type

/**
 * The organization statuses of the hub's directory (merged beats archived beats active; deleted beats all).
 * Any status but `active` suspends the organization in the services that consume the fact.
 */
export const OrganizationStatus = Schema.Literals(["active", "archived", "merged", "deleted"])
export type OrganizationStatus = typeof OrganizationStatus.Type

/** `data` of `organization.status.changed`. `changedAt` orders facts that arrive out of order. */
export const OrganizationStatusChanged = Schema.Struct({
  organizationId: bounded(64),
  status: OrganizationStatus,
  changedAt: IsoDateTime
}).annotate({ identifier: "OrganizationStatusChanged" })
export type OrganizationStatusChanged = typeof OrganizationStatusChanged.Type

/**
 * `data` of `subject.tier.changed`: the person's tier now, and the organization it comes from (their first
 * active organization; null when they have none, and are on the free tier).
 */
export const SubjectTierChanged = Schema.Struct({
  organizationId: Schema.NullOr(bounded(64)),
  tier: Tier,
  changedAt: IsoDateTime
}).annotate({ identifier: "SubjectTierChanged" })
export type SubjectTierChanged = typeof SubjectTierChanged.Type

/** A fact as the hub sends it. */
export type Fact =
  | {
      readonly fact: typeof organizationStatusChanged
      readonly subject: FactBody["subject"]
      readonly data: OrganizationStatusChanged
    }
  | {
      readonly fact: typeof subjectTierChanged
      readonly subject: FactBody["subject"]
      readonly data: SubjectTierChanged
    }

/** The schema of each fact's `data`. */
export const factData = {
  [organizationStatusChanged]: OrganizationStatusChanged,
  [subjectTierChanged]: SubjectTierChanged
} as const satisfies Record<FactName, Schema.Top>
