import { Context, type Effect } from "effect"
import type { Tier } from "../kernel/Manifest.ts"

/**
 * Identity and entitlements: who a user is and what they are
 * entitled to. The hub is the only place people sign in; every service learns about users from it.
 */

export const OrgRoles = ["OWNER", "ADMIN", "MEMBER", "VIEWER"] as const
export type OrgRole = (typeof OrgRoles)[number]

/** A department or a role inside one. */
export interface OrgUnitRef {
  readonly id: string
  readonly slug: string
  readonly name: string
}

export interface Organization {
  readonly id: string
  readonly name: string
  readonly tier: Tier
  readonly createdAt: string
  /** Set when the organization was archived; null when it is not. */
  readonly archivedAt: string | null
  /** The surviving organization after a domain merge; null when not merged (or the merge was undone). */
  readonly mergedIntoOrgId: string | null
  readonly deletedAt: string | null
}

export const OrgStatuses = ["active", "archived", "merged", "deleted"] as const
export type OrgStatus = (typeof OrgStatuses)[number]

/**
 * When several apply, merged beats archived beats active. A deleted
 * organization is deleted whatever else it was (its roster is empty).
 */
export const orgStatus = (org: Organization): OrgStatus =>
  org.deletedAt !== null
    ? "deleted"
    : org.mergedIntoOrgId !== null
      ? "merged"
      : org.archivedAt !== null
        ? "archived"
        : "active"

export interface User {
  readonly id: string
  /** Normalised (trimmed, lower case); unique. */
  readonly email: string
  readonly name: string | null
  readonly verified: boolean
  readonly createdAt: string
}

export interface Membership {
  readonly orgId: string
  readonly userId: string
  readonly role: OrgRole
  /** The primary department; null when unassigned. */
  readonly department: OrgUnitRef | null
  /** The role inside `department`; never non-null while `department` is null. */
  readonly departmentRole: OrgUnitRef | null
  /** Slugs of every department the member belongs to (the primary one included), at most 8. */
  readonly departments: ReadonlyArray<string>
  /** Slugs of the member's roles, at most 8. */
  readonly roles: ReadonlyArray<string>
  readonly createdAt: string
}

/** What an organization agreed to for one installed app. */
export interface Consents {
  /** The app may receive the organization's id (`companyId`). */
  readonly companyId: boolean
  /** The app may receive access claims (role, departments, roles, permissions). */
  readonly accessClaims: boolean
  /** The app may be embedded full page (EMBED_NOT_CONSENTED otherwise). */
  readonly embed: boolean
}

/**
 * One app installed in one organization. `epoch` (unix seconds) is the last uninstall or re-consent: every
 * identity token issued at or before it is no longer good for that app.
 */
export interface Installation {
  readonly orgId: string
  readonly serviceId: string
  readonly active: boolean
  readonly epoch: number
  readonly consents: Consents
  /** Permission keys the organization consented to for this app, in the app's namespace (`<slug>.…`). */
  readonly permissions: ReadonlyArray<string>
  readonly updatedAt: string
}

/** Feature flags: the access-claims rollout and the developer platform. */
export const FlagNames = ["access-claims", "developer-platform"] as const
export type FlagName = (typeof FlagNames)[number]

/**
 * A flag is set globally (`orgId` null) and may be overridden per organization; an unset flag is off, so
 * both features fail closed until an operator turns them on.
 */
export interface FlagSetting {
  readonly name: FlagName
  readonly orgId: string | null
  readonly enabled: boolean
}

export const flagEnabled = (settings: ReadonlyArray<FlagSetting>, name: FlagName, orgId: string | null): boolean => {
  const own = orgId === null ? undefined : settings.find((s) => s.name === name && s.orgId === orgId)
  return (own ?? settings.find((s) => s.name === name && s.orgId === null))?.enabled ?? false
}

/** A user's membership with its organization: what subject context, authorization and tokens read. */
export interface MemberOfOrg {
  readonly membership: Membership
  readonly org: Organization
}

/** A roster row: a member with their user. */
export interface RosterEntry {
  readonly user: User
  readonly membership: Membership
}

/** Per-user choices: which services show in their workspace, and which notification channels they opted into. */
export const ChannelNames = ["bell", "email", "chat", "push"] as const
export type ChannelName = (typeof ChannelNames)[number]

/** Email per notification as it comes, or one digest per batch interval with every one that waited. */
export const EmailModes = ["immediate", "digest"] as const
export type EmailMode = (typeof EmailModes)[number]

export interface UserPreferences {
  /** service id -> visible; a service not named is visible. A hidden service's notifications are not shown or sent. */
  readonly serviceVisible: Readonly<Record<string, boolean>>
  /** The channels the user opted into; a new user has the bell and email. */
  readonly channels: ReadonlyArray<ChannelName>
  /** Absent: `digest`. */
  readonly emailMode?: EmailMode | undefined
  /** The person's chat webhook URL, sealed with the hub's secrets key (core/auth/SecretBox.ts); absent: none. */
  readonly chatWebhook?: string | undefined
}

export const defaultPreferences: UserPreferences = { serviceVisible: {}, channels: ["bell", "email"] }

/** Whom a notification is for: the user and their notification preferences. */
export interface Recipient {
  readonly user: User
  readonly preferences: UserPreferences
}

/**
 * The directory port. Reads answer `undefined` for a missing row; writes that conflict answer the conflict.
 * Infrastructure failures are defects (the HTTP layer answers 500/503 with a safe message).
 */
export class Directory extends Context.Service<
  Directory,
  {
    readonly createOrg: (org: Organization) => Effect.Effect<void>
    readonly updateOrg: (org: Organization) => Effect.Effect<void>
    readonly findOrg: (orgId: string) => Effect.Effect<Organization | undefined>
    readonly listOrgs: () => Effect.Effect<ReadonlyArray<Organization>>

    /** Creates the user; `email_taken` when the normalised email exists. */
    readonly createUser: (user: User) => Effect.Effect<"created" | "email_taken">
    readonly updateUser: (user: User) => Effect.Effect<void>
    readonly findUserByEmail: (email: string) => Effect.Effect<User | undefined>
    readonly findUserById: (userId: string) => Effect.Effect<User | undefined>
    /** Every user, by email. */
    readonly listUsers: () => Effect.Effect<ReadonlyArray<User>>

    /** Adds a membership; `already_member` when the user is in that organization. */
    readonly addMember: (membership: Membership) => Effect.Effect<"added" | "already_member">
    /** Replaces an existing membership (role, departments, roles); false when there is none. */
    readonly updateMember: (membership: Membership) => Effect.Effect<boolean>
    readonly removeMember: (orgId: string, userId: string) => Effect.Effect<boolean>
    /** The user's memberships with their organizations, oldest membership first. */
    readonly membershipsOf: (userId: string) => Effect.Effect<ReadonlyArray<MemberOfOrg>>
    /** An organization's members with their users, oldest membership first. */
    readonly roster: (orgId: string) => Effect.Effect<ReadonlyArray<RosterEntry>>

    readonly saveInstallation: (installation: Installation) => Effect.Effect<void>
    readonly findInstallation: (orgId: string, serviceId: string) => Effect.Effect<Installation | undefined>
    readonly installationsOf: (orgId: string) => Effect.Effect<ReadonlyArray<Installation>>

    readonly setFlag: (setting: FlagSetting) => Effect.Effect<void>
    readonly flags: () => Effect.Effect<ReadonlyArray<FlagSetting>>

    readonly savePreferences: (userId: string, preferences: UserPreferences) => Effect.Effect<void>
    /** The user's preferences; `defaultPreferences` when never saved. */
    readonly preferences: (userId: string) => Effect.Effect<UserPreferences>
    /**
     * The users with these (normalised) addresses and their preferences (the defaults until saved), in one
     * read: whom the notifications of a batch of events are for, on the event processor's path. Keyed by
     * address; an address no user has is absent.
     */
    readonly recipients: (emails: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, Recipient>>
  }
>()("core/hub/Directory") {}
