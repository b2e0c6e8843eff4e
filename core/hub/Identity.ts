import { Clock, Context, Effect, Layer } from "effect"
import { isoAt } from "../kernel/Timestamp.ts"
import { normalizeEmail } from "../kernel/Email.ts"
import { Conflict, NotFound, ValidationError } from "../kernel/Errors.ts"
import { pathIssue } from "../kernel/FieldIssue.ts"
import { IdGenerator } from "../kernel/Ids.ts"
import {
  Directory,
  FlagNames,
  orgStatus,
  type FlagName,
  type FlagSetting,
  type Installation,
  type Membership,
  type OrgStatus,
  type Organization,
  type RosterEntry,
  type User
} from "./Directory.ts"
import {
  checkEmail,
  checkName,
  checkPermissions,
  checkRole,
  checkTier,
  installOrReconsent,
  orgNameMax,
  patchMembership,
  patchOrg,
  uninstalled,
  userNameMax,
  type InstallationGrant,
  type MemberPatch,
  type OrgPatch
} from "./IdentityRules.ts"
import { HubFacts } from "./HubFacts.ts"
import { ServiceStore } from "./ServiceStore.ts"

export interface OrgView {
  readonly org: Organization
  readonly status: OrgStatus
  readonly roster: ReadonlyArray<RosterEntry>
  readonly installations: ReadonlyArray<Installation>
}

export interface OrgCreate {
  readonly name: string
  readonly tier?: string | undefined
}

export interface UserCreate {
  readonly email: string
  readonly name?: string | null | undefined
  readonly verified?: boolean | undefined
}

export interface FlagSet {
  readonly name: string
  readonly enabled: boolean
  readonly orgId?: string | undefined
}

/**
 * The operator's identity and entitlements use cases: organizations and their status, users, memberships,
 * app installations with their epoch, feature flags. The rules they apply are pure (core/hub/IdentityRules.ts).
 */
export class Identity extends Context.Service<
  Identity,
  {
    readonly createOrg: (input: OrgCreate) => Effect.Effect<Organization, ValidationError>
    readonly getOrg: (orgId: string) => Effect.Effect<OrgView, NotFound>
    /** Every organization (by id), whatever its status. */
    readonly listOrgs: () => Effect.Effect<ReadonlyArray<Organization>>
    /** Every user of the directory, by email. */
    readonly listUsers: () => Effect.Effect<ReadonlyArray<User>>
    /**
     * Tier, archive or unarchive, merge or undo a merge, delete: all of a patch or none of it (`patchOrg`).
     * A deleted organization is deleted whatever else it was: its roster is emptied (Directory `orgStatus`).
     * The facts the change implies (a status, members' tiers) go to the fact outbox in the caller's unit of
     * work (`HubFacts`).
     */
    readonly updateOrg: (orgId: string, patch: OrgPatch) => Effect.Effect<Organization, NotFound | ValidationError>

    readonly createUser: (input: UserCreate) => Effect.Effect<User, ValidationError | Conflict>

    /**
     * Conflict when the user is already a member, or the organization is deleted. Joining or leaving may change
     * the person's tier: that fact goes to the fact outbox in the caller's unit of work (`HubFacts`).
     */
    readonly addMember: (
      orgId: string,
      input: { readonly email: string; readonly role: string }
    ) => Effect.Effect<RosterEntry, NotFound | Conflict | ValidationError>
    readonly updateMember: (
      orgId: string,
      email: string,
      patch: MemberPatch
    ) => Effect.Effect<RosterEntry, NotFound | ValidationError>
    readonly removeMember: (orgId: string, email: string) => Effect.Effect<void, NotFound>

    /** Installs a registered app, or re-consents when it is installed (see `installOrReconsent`). */
    readonly install: (
      orgId: string,
      serviceId: string,
      grant: InstallationGrant
    ) => Effect.Effect<Installation, NotFound | Conflict | ValidationError>
    /** NotFound when the app is not installed (never installed, or already uninstalled). */
    readonly uninstall: (orgId: string, serviceId: string) => Effect.Effect<Installation, NotFound>

    readonly setFlag: (input: FlagSet) => Effect.Effect<FlagSetting, NotFound | ValidationError>
  }
>()("core/hub/Identity") {
  static readonly layer: Layer.Layer<Identity, never, Directory | ServiceStore | HubFacts | IdGenerator> = Layer.effect(
    Identity,
    Effect.gen(function* () {
      const directory = yield* Directory
      const services = yield* ServiceStore
      const facts = yield* HubFacts
      const ids = yield* IdGenerator
      const now = Effect.map(Clock.currentTimeMillis, (ms) => ({
        seconds: Math.floor(ms / 1000),
        iso: isoAt(ms)
      }))
      const valid = <A>(value: A | ValidationError): Effect.Effect<A, ValidationError> =>
        value instanceof ValidationError ? Effect.fail(value) : Effect.succeed(value as A)

      const loadOrg = (orgId: string) =>
        Effect.flatMap(directory.findOrg(orgId), (org) =>
          org === undefined ? Effect.fail(new NotFound({ message: "No such organization." })) : Effect.succeed(org)
        )
      /** A deleted organization keeps its row for the record, but takes no new members or apps. */
      const loadLiveOrg = (orgId: string) =>
        Effect.flatMap(loadOrg(orgId), (org) =>
          orgStatus(org) === "deleted"
            ? Effect.fail(new Conflict({ message: "The organization is deleted." }))
            : Effect.succeed(org)
        )
      const loadUser = (email: string) =>
        Effect.flatMap(directory.findUserByEmail(normalizeEmail(email)), (user) =>
          user === undefined ? Effect.fail(new NotFound({ message: "No such user." })) : Effect.succeed(user)
        )
      const loadMember = (orgId: string, email: string) =>
        Effect.gen(function* () {
          yield* loadOrg(orgId)
          const user = yield* loadUser(email)
          const entry = (yield* directory.roster(orgId)).find((e) => e.user.id === user.id)
          if (entry === undefined) return yield* Effect.fail(new NotFound({ message: "No such member." }))
          return entry
        })

      return Identity.of({
        createOrg: (input) =>
          Effect.gen(function* () {
            const name = yield* valid(checkName("name", input.name, orgNameMax))
            const tier = yield* valid(checkTier(input.tier ?? "free"))
            const org: Organization = {
              id: `org_${(yield* ids.next).toLowerCase()}`,
              name,
              tier,
              createdAt: (yield* now).iso,
              archivedAt: null,
              mergedIntoOrgId: null,
              deletedAt: null
            }
            yield* directory.createOrg(org)
            return org
          }),

        getOrg: (orgId) =>
          Effect.gen(function* () {
            const org = yield* loadOrg(orgId)
            return {
              org,
              status: orgStatus(org),
              roster: yield* directory.roster(orgId),
              installations: yield* directory.installationsOf(orgId)
            }
          }),

        listOrgs: () => directory.listOrgs(),

        listUsers: () => directory.listUsers(),

        updateOrg: (orgId, patch) =>
          Effect.gen(function* () {
            const org = yield* loadOrg(orgId)
            const target =
              typeof patch.mergedIntoOrgId === "string" ? yield* directory.findOrg(patch.mergedIntoOrgId) : undefined
            const next = yield* valid(patchOrg(org, patch, target, (yield* now).iso))
            // Before the roster is emptied: the members of a deleted organization are told too.
            yield* facts.organizationChanged(org, next)
            if (patch.deleted === true) {
              for (const entry of yield* directory.roster(orgId)) yield* directory.removeMember(orgId, entry.user.id)
            }
            yield* directory.updateOrg(next)
            return next
          }),

        createUser: (input) =>
          Effect.gen(function* () {
            const email = yield* valid(checkEmail(input.email))
            const name =
              input.name === undefined || input.name === null
                ? null
                : yield* valid(checkName("name", input.name, userNameMax))
            const user: User = {
              id: yield* ids.next,
              email,
              name,
              verified: input.verified ?? false,
              createdAt: (yield* now).iso
            }
            if ((yield* directory.createUser(user)) === "email_taken") {
              return yield* Effect.fail(new Conflict({ message: "A user with this email already exists." }))
            }
            return user
          }),

        addMember: (orgId, input) =>
          Effect.gen(function* () {
            const role = yield* valid(checkRole(input.role))
            const email = yield* valid(checkEmail(input.email))
            yield* loadLiveOrg(orgId)
            const user = yield* loadUser(email)
            const membership: Membership = {
              orgId,
              userId: user.id,
              role,
              department: null,
              departmentRole: null,
              departments: [],
              roles: [],
              createdAt: (yield* now).iso
            }
            if ((yield* facts.membershipChange(user, directory.addMember(membership))) === "already_member") {
              return yield* Effect.fail(new Conflict({ message: "The user is already a member of this organization." }))
            }
            return { user, membership }
          }),

        updateMember: (orgId, email, patch) =>
          Effect.gen(function* () {
            const entry = yield* loadMember(orgId, email)
            const membership = yield* valid(patchMembership(entry.membership, patch))
            if (!(yield* directory.updateMember(membership))) {
              return yield* Effect.fail(new NotFound({ message: "No such member." }))
            }
            return { user: entry.user, membership }
          }),

        removeMember: (orgId, email) =>
          Effect.gen(function* () {
            const entry = yield* loadMember(orgId, email)
            yield* facts.membershipChange(entry.user, directory.removeMember(orgId, entry.user.id))
          }),

        install: (orgId, serviceId, grant) =>
          Effect.gen(function* () {
            yield* loadLiveOrg(orgId)
            if ((yield* services.find(serviceId)) === undefined) {
              return yield* Effect.fail(new NotFound({ message: "No such service." }))
            }
            const permissions = yield* valid(checkPermissions(serviceId, grant.permissions))
            const existing = yield* directory.findInstallation(orgId, serviceId)
            const next = installOrReconsent(existing, { orgId, serviceId }, { ...grant, permissions }, yield* now)
            yield* directory.saveInstallation(next)
            return next
          }),

        uninstall: (orgId, serviceId) =>
          Effect.gen(function* () {
            yield* loadOrg(orgId)
            const existing = yield* directory.findInstallation(orgId, serviceId)
            if (existing === undefined || !existing.active) {
              return yield* Effect.fail(new NotFound({ message: "The app is not installed." }))
            }
            const next = uninstalled(existing, yield* now)
            yield* directory.saveInstallation(next)
            return next
          }),

        setFlag: (input) =>
          Effect.gen(function* () {
            if (!(FlagNames as ReadonlyArray<string>).includes(input.name)) {
              const message = `name must be one of ${FlagNames.join(", ")}.`
              return yield* new ValidationError({ message, details: [pathIssue("name", message)] })
            }
            if (input.orgId !== undefined) yield* loadOrg(input.orgId)
            const setting: FlagSetting = {
              name: input.name as FlagName,
              orgId: input.orgId ?? null,
              enabled: input.enabled
            }
            yield* directory.setFlag(setting)
            return setting
          })
      })
    })
  )
}
