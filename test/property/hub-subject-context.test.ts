import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { ContextCallers } from "../../core/hub/ContextKeys.ts"
import {
  defaultPreferences,
  OrgRoles,
  type FlagSetting,
  type MemberOfOrg,
  type Organization,
  type OrgRole,
  type RosterEntry
} from "../../core/hub/Directory.ts"
import {
  accessPermissions,
  appPermissions,
  holds,
  namespaceOf,
  PermissionCatalog,
  TierRanks
} from "../../core/hub/Permissions.ts"
import { buildSubjectContext, FieldProfiles, primaryMembership, teamMember } from "../../core/hub/SubjectContext.ts"
import type { Tier } from "../../core/kernel/Manifest.ts"

const tiers: ReadonlyArray<Tier> = ["free", "hourly", "monthly"]
const at = "2026-01-01T00:00:00.000Z"

const org = (id: string, tier: Tier, status: Partial<Organization> = {}): Organization => ({
  id,
  name: `Org ${id}`,
  tier,
  createdAt: at,
  archivedAt: null,
  mergedIntoOrgId: null,
  deletedAt: null,
  ...status
})

const unit = (slug: string) => ({ id: `u-${slug}`, slug, name: slug })

const membership = (orgId: string, role: OrgRole, userId = "user-1") => ({
  orgId,
  userId,
  role,
  department: unit("engineering"),
  departmentRole: unit("lead"),
  departments: ["engineering", "ops"],
  roles: ["lead"],
  createdAt: at
})

const rosterOf = (orgId: string): ReadonlyArray<RosterEntry> => [
  {
    user: { id: "user-1", email: "ada@example.com", name: "Ada", verified: true, createdAt: at },
    membership: membership(orgId, "OWNER")
  },
  {
    user: { id: "user-2", email: "bo@example.com", name: null, verified: true, createdAt: at },
    // A department role left behind after the department was unassigned: never shown without it.
    membership: { ...membership(orgId, "VIEWER", "user-2"), department: null, departmentRole: unit("lead") }
  }
]

const services = [
  { id: "decisions", firstParty: true },
  { id: "shopapp", firstParty: false },
  { id: "tasks", firstParty: true }
]

const facts = (input: {
  caller: (typeof ContextCallers)[number]
  role: OrgRole
  tier: Tier
  hasOrg: boolean
  flags: ReadonlyArray<FlagSetting>
  hidden?: ReadonlyArray<string>
}) => {
  const primary: MemberOfOrg | undefined = input.hasOrg
    ? { org: org("org-1", input.tier), membership: membership("org-1", input.role) }
    : undefined
  return buildSubjectContext({
    caller: input.caller,
    email: "ada@example.com",
    primary,
    roster: input.hasOrg ? rosterOf("org-1") : [],
    installations: [],
    flags: input.flags,
    preferences: {
      ...defaultPreferences,
      serviceVisible: Object.fromEntries((input.hidden ?? []).map((id) => [id, false]))
    },
    services,
    now: at
  })
}

const flagSettings = fc.constantFrom<ReadonlyArray<FlagSetting>>(
  [],
  [{ name: "access-claims", orgId: null, enabled: true }],
  [{ name: "access-claims", orgId: null, enabled: false }],
  [
    { name: "access-claims", orgId: null, enabled: true },
    { name: "access-claims", orgId: "org-1", enabled: false }
  ],
  [
    { name: "access-claims", orgId: null, enabled: false },
    { name: "access-claims", orgId: "org-1", enabled: true }
  ],
  [{ name: "developer-platform", orgId: null, enabled: true }]
)

const accessFlagOn = (flags: ReadonlyArray<FlagSetting>) =>
  (
    flags.find((f) => f.name === "access-claims" && f.orgId === "org-1") ??
    flags.find((f) => f.name === "access-claims" && f.orgId === null)
  )?.enabled === true

describe("subject context field profiles", () => {
  it("access, toolBelt and team appear exactly as the caller's profile, the flag and the organization say", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ContextCallers),
        fc.constantFrom(...OrgRoles),
        fc.constantFrom(...tiers),
        fc.boolean(),
        flagSettings,
        (caller, role, tier, hasOrg, flags) => {
          const context = facts({ caller, role, tier, hasOrg, flags })
          const profile = FieldProfiles[caller]
          assert.strictEqual("access" in context, profile.access && hasOrg && accessFlagOn(flags))
          assert.strictEqual("toolBelt" in context, profile.toolBelt)
          assert.strictEqual("team" in context, profile.team && hasOrg)
          assert.strictEqual(context.subject.tier, hasOrg ? tier : "free")
          assert.strictEqual(context.subject.companyId, hasOrg ? "org-1" : undefined)
          assert.strictEqual("companyId" in context.subject, hasOrg)
          assert.strictEqual(context.asOf, at)
        }
      )
    )
  })

  it("the chosen profiles: error monitoring and tasks see the team, schema analysis gets access only", () => {
    assert.deepStrictEqual(FieldProfiles, {
      "error-monitoring": { access: true, toolBelt: false, team: true },
      "schema-analysis": { access: true, toolBelt: false, team: false },
      tasks: { access: true, toolBelt: true, team: true },
      "meeting-recaps": { access: false, toolBelt: true, team: true }
    })
  })

  it("access.permissions stay in the caller's namespace, within the role and the organization's tier", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ContextCallers.filter((c) => FieldProfiles[c].access)),
        fc.constantFrom(...OrgRoles),
        fc.constantFrom(...tiers),
        (caller, role, tier) => {
          const context = facts({
            caller,
            role,
            tier,
            hasOrg: true,
            flags: [{ name: "access-claims", orgId: null, enabled: true }]
          })
          const permissions = context.access!.permissions
          for (const key of permissions) {
            assert.strictEqual(namespaceOf(key), caller)
            const spec = PermissionCatalog.find((s) => s.key === key)!
            assert.isTrue(spec.roles.includes(role))
            assert.isAtMost(TierRanks[spec.minTier], TierRanks[tier])
          }
          // Nothing the member holds on that tier in that namespace is missing.
          const expected = PermissionCatalog.filter(
            (s) => namespaceOf(s.key) === caller && s.roles.includes(role) && TierRanks[s.minTier] <= TierRanks[tier]
          ).map((s) => s.key)
          assert.deepStrictEqual([...permissions].sort(), expected.sort())
          assert.strictEqual(context.access!.orgRole, role)
          assert.deepStrictEqual(context.access!.departments, ["engineering", "ops"])
        }
      )
    )
  })

  it("a higher tier never takes a permission away, a downgrade does", () => {
    fc.assert(
      fc.property(fc.constantFrom(...ContextCallers), fc.constantFrom(...OrgRoles), (caller, role) => {
        const [free, hourly, monthly] = tiers.map((tier) => accessPermissions(role, tier, caller))
        for (const key of free!) assert.include(hourly!, key)
        for (const key of hourly!) assert.include(monthly!, key)
      })
    )
    assert.deepStrictEqual(accessPermissions("MEMBER", "free", "tasks"), ["tasks.task.read", "tasks.task.write"])
    assert.deepStrictEqual(accessPermissions("MEMBER", "hourly", "tasks"), [
      "tasks.task.delegate",
      "tasks.task.read",
      "tasks.task.write"
    ])
    assert.deepStrictEqual(accessPermissions("VIEWER", "monthly", "error-monitoring"), ["error-monitoring.ticket.read"])
  })

  it("team members: department role only with a department; permissions and tool belt per service", () => {
    const context = facts({ caller: "tasks", role: "MEMBER", tier: "free", hasOrg: true, flags: [], hidden: ["tasks"] })
    assert.deepStrictEqual(context.team, {
      organizationId: "org-1",
      name: "Org org-1",
      members: [
        {
          email: "ada@example.com",
          name: "Ada",
          role: "OWNER",
          department: unit("engineering"),
          departmentRole: unit("lead")
        },
        { email: "bo@example.com", name: null, role: "VIEWER", department: null, departmentRole: null }
      ]
    })
    assert.deepStrictEqual(context.permissions, {
      orgRole: "MEMBER",
      workspaceAdmin: false,
      services: {
        decisions: { access: true, maxScope: "write" },
        shopapp: { access: false, maxScope: "none" },
        tasks: { access: true, maxScope: "write" }
      }
    })
    // The user hid tasks; the app is not installed.
    assert.deepStrictEqual(context.toolBelt, ["decisions"])
    assert.deepStrictEqual(context.preferences.serviceVisible, { decisions: true, shopapp: true, tasks: false })
  })

  it("a user without an organization: no role, no team, write scope on first-party services", () => {
    const context = facts({ caller: "tasks", role: "OWNER", tier: "monthly", hasOrg: false, flags: [] })
    assert.deepStrictEqual(context.subject, { email: "ada@example.com", tier: "free" })
    assert.strictEqual(context.permissions.orgRole, null)
    assert.isFalse(context.permissions.workspaceAdmin)
    assert.deepStrictEqual(context.permissions.services["decisions"], { access: true, maxScope: "write" })
    assert.deepStrictEqual(context.toolBelt, ["decisions", "tasks"])
  })

  it("the primary organization is the oldest active one", () => {
    const mk = (id: string, status: Partial<Organization>): MemberOfOrg => ({
      org: org(id, "hourly", status),
      membership: membership(id, "MEMBER")
    })
    const list = [
      mk("archived", { archivedAt: at }),
      mk("merged", { mergedIntoOrgId: "x" }),
      mk("deleted", { deletedAt: at }),
      mk("first-active", {}),
      mk("second-active", {})
    ]
    assert.strictEqual(primaryMembership(list)?.org.id, "first-active")
    assert.isUndefined(primaryMembership(list.slice(0, 3)))
    assert.deepStrictEqual(teamMember(rosterOf("o")[1]!).departmentRole, null)
  })

  it("shows a member without a verified email with a null email, never the unproven address", () => {
    const [ada] = rosterOf("o")
    assert.strictEqual(teamMember(ada!).email, "ada@example.com")
    const unverified = teamMember({ ...ada!, user: { ...ada!.user, verified: false } })
    assert.strictEqual(unverified.email, null)
    assert.strictEqual(unverified.name, "Ada")
  })
})

describe("registry authorization permissions", () => {
  it("only consented keys of the app's namespace the role holds, sorted, unique, at most the limit", () => {
    const role = fc.constantFrom(...OrgRoles)
    const key = fc.tuple(
      fc.constantFrom("shopapp", "otherapp", "tasks"),
      fc.constantFrom("order", "invoice", "task"),
      fc.constantFrom("read", "write", "manage", "delete", "approve", "list")
    )
    fc.assert(
      fc.property(fc.array(key, { maxLength: 40 }), role, fc.constantFrom(...tiers), (parts, r, tier) => {
        const consented = parts.map((p) => p.join("."))
        const granted = appPermissions({ consented, app: "shopapp", role: r, tier, max: 16 })
        assert.isAtMost(granted.length, 16)
        assert.deepStrictEqual([...granted], [...new Set(granted)].sort())
        for (const k of granted) {
          assert.include(consented, k)
          assert.strictEqual(namespaceOf(k), "shopapp")
          assert.isTrue(holds(r, tier, k))
        }
      })
    )
    const consented = ["shopapp.order.read", "shopapp.order.write", "shopapp.store.manage", "tasks.task.read"]
    assert.deepStrictEqual(appPermissions({ consented, app: "shopapp", role: "VIEWER", tier: "free", max: 16 }), [
      "shopapp.order.read"
    ])
    assert.deepStrictEqual(appPermissions({ consented, app: "shopapp", role: "MEMBER", tier: "free", max: 16 }), [
      "shopapp.order.read",
      "shopapp.order.write"
    ])
    assert.deepStrictEqual(appPermissions({ consented, app: "shopapp", role: "ADMIN", tier: "free", max: 16 }), [
      "shopapp.order.read",
      "shopapp.order.write",
      "shopapp.store.manage"
    ])
  })
})
