import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { monotonicFactory } from "ulid"
import {
  defaultPreferences,
  Directory,
  type Installation,
  type Membership,
  type Organization,
  type User
} from "../../core/hub/Directory.ts"

const nextId = monotonicFactory()

const org = (fields: Partial<Organization> = {}): Organization => ({
  id: `org_${nextId()}`,
  name: "Acme — Ünïcode ✓",
  tier: "free",
  createdAt: "2030-01-01T10:00:00.000Z",
  archivedAt: null,
  mergedIntoOrgId: null,
  deletedAt: null,
  ...fields
})

const user = (fields: Partial<User> = {}): User => {
  const id = nextId()
  return {
    id,
    email: `u${id.toLowerCase()}@example.com`,
    name: "Ada",
    verified: true,
    createdAt: "2030-01-01T10:00:00.000Z",
    ...fields
  }
}

const membership = (orgId: string, userId: string, fields: Partial<Membership> = {}): Membership => ({
  orgId,
  userId,
  role: "MEMBER",
  department: null,
  departmentRole: null,
  departments: [],
  roles: [],
  createdAt: "2030-01-01T10:00:00.000Z",
  ...fields
})

const installation = (orgId: string, serviceId: string, fields: Partial<Installation> = {}): Installation => ({
  orgId,
  serviceId,
  active: true,
  epoch: 1_900_000_000,
  consents: { companyId: true, accessClaims: false, embed: true },
  permissions: [`${serviceId}.read`],
  updatedAt: "2030-01-01T10:00:00.000Z",
  ...fields
})

/** The Directory port's contract (core/hub/Directory.ts), run once per adapter. */
export const DirectoryContract = (name: string, directory: Layer.Layer<Directory, unknown>) =>
  describe(`Directory contract (${name})`, () =>
    layer(directory, { excludeTestServices: true })((it) => {
      it.effect("keeps an organization whole and answers undefined for an unknown one", () =>
        Effect.gen(function* () {
          const store = yield* Directory
          const created = org({ tier: "monthly" })
          yield* store.createOrg(created)
          assert.deepStrictEqual(yield* store.findOrg(created.id), created)
          assert.isUndefined(yield* store.findOrg(`org_${nextId()}`))
        })
      )

      it.effect("replaces an organization on update, every status field included", () =>
        Effect.gen(function* () {
          const store = yield* Directory
          const created = org()
          yield* store.createOrg(created)
          const updated: Organization = {
            ...created,
            tier: "hourly",
            archivedAt: "2030-02-01T00:00:00.000Z",
            mergedIntoOrgId: "org_survivor",
            deletedAt: "2030-03-01T00:00:00.000Z"
          }
          yield* store.updateOrg(updated)
          assert.deepStrictEqual(yield* store.findOrg(created.id), updated)
          yield* store.updateOrg({ ...updated, archivedAt: null, mergedIntoOrgId: null, deletedAt: null })
          assert.deepStrictEqual(yield* store.findOrg(created.id), {
            ...updated,
            archivedAt: null,
            mergedIntoOrgId: null,
            deletedAt: null
          })
        })
      )

      it.effect("updating an unknown organization creates nothing", () =>
        Effect.gen(function* () {
          const store = yield* Directory
          const ghost = org()
          yield* store.updateOrg(ghost)
          assert.isUndefined(yield* store.findOrg(ghost.id))
        })
      )

      it.effect("lists organizations by id", () =>
        Effect.gen(function* () {
          const store = yield* Directory
          const [a, b, c] = [org(), org(), org()]
          yield* store.createOrg(c)
          yield* store.createOrg(a)
          yield* store.createOrg(b)
          const ids = new Set([a.id, b.id, c.id])
          const listed = (yield* store.listOrgs()).filter((o) => ids.has(o.id))
          assert.deepStrictEqual(listed, [a, b, c])
        })
      )

      it.effect("creates a user once per email and finds it by email and by id", () =>
        Effect.gen(function* () {
          const store = yield* Directory
          const ada = user({ name: null, verified: false })
          assert.strictEqual(yield* store.createUser(ada), "created")
          assert.strictEqual(yield* store.createUser(user({ email: ada.email })), "email_taken")
          assert.deepStrictEqual(yield* store.findUserByEmail(ada.email), ada)
          assert.deepStrictEqual(yield* store.findUserById(ada.id), ada)
          assert.isUndefined(yield* store.findUserByEmail(`nobody${nextId().toLowerCase()}@example.com`))
          assert.isUndefined(yield* store.findUserById(nextId()))
        })
      )

      it.effect("lists users by email", () =>
        Effect.gen(function* () {
          const store = yield* Directory
          const tag = nextId().toLowerCase()
          const [b, a, c] = [
            user({ email: `b${tag}@example.com` }),
            user({ email: `a${tag}@example.com` }),
            user({ email: `c${tag}@example.com` })
          ]
          for (const one of [b, a, c]) yield* store.createUser(one)
          const ids = new Set([a.id, b.id, c.id])
          assert.deepStrictEqual(
            (yield* store.listUsers()).filter((u) => ids.has(u.id)),
            [a, b, c]
          )
        })
      )

      it.effect("updates a user, its email included", () =>
        Effect.gen(function* () {
          const store = yield* Directory
          const ada = user()
          yield* store.createUser(ada)
          const renamed = { ...ada, email: `new${ada.email}`, name: "Ada L.", verified: false }
          yield* store.updateUser(renamed)
          assert.deepStrictEqual(yield* store.findUserById(ada.id), renamed)
          assert.deepStrictEqual(yield* store.findUserByEmail(renamed.email), renamed)
          assert.isUndefined(yield* store.findUserByEmail(ada.email))
          // The old address is free again.
          assert.strictEqual(yield* store.createUser(user({ email: ada.email })), "created")
        })
      )

      it.effect("adds one membership per organization and user", () =>
        Effect.gen(function* () {
          const store = yield* Directory
          const acme = org()
          const ada = user()
          yield* store.createOrg(acme)
          yield* store.createUser(ada)
          assert.strictEqual(yield* store.addMember(membership(acme.id, ada.id, { role: "OWNER" })), "added")
          assert.strictEqual(yield* store.addMember(membership(acme.id, ada.id, { role: "VIEWER" })), "already_member")
          const roster = yield* store.roster(acme.id)
          assert.deepStrictEqual(roster, [{ user: ada, membership: membership(acme.id, ada.id, { role: "OWNER" }) }])
        })
      )

      it.effect("replaces a membership with departments and roles, and answers false when there is none", () =>
        Effect.gen(function* () {
          const store = yield* Directory
          const acme = org()
          const ada = user()
          yield* store.createOrg(acme)
          yield* store.createUser(ada)
          yield* store.addMember(membership(acme.id, ada.id))
          const updated = membership(acme.id, ada.id, {
            role: "ADMIN",
            department: { id: "dep_1", slug: "finance", name: "Finance" },
            departmentRole: { id: "rol_1", slug: "controller", name: "Controller" },
            departments: ["finance", "ops"],
            roles: ["controller"]
          })
          assert.isTrue(yield* store.updateMember(updated))
          assert.deepStrictEqual(
            (yield* store.membershipsOf(ada.id)).map((m) => m.membership),
            [updated]
          )
          assert.isFalse(yield* store.updateMember(membership(acme.id, user().id)))
        })
      )

      it.effect("removes a membership once", () =>
        Effect.gen(function* () {
          const store = yield* Directory
          const acme = org()
          const ada = user()
          yield* store.createOrg(acme)
          yield* store.createUser(ada)
          yield* store.addMember(membership(acme.id, ada.id))
          assert.isTrue(yield* store.removeMember(acme.id, ada.id))
          assert.isFalse(yield* store.removeMember(acme.id, ada.id))
          assert.deepStrictEqual(yield* store.roster(acme.id), [])
          assert.deepStrictEqual(yield* store.membershipsOf(ada.id), [])
        })
      )

      it.effect("lists a user's memberships and an org's roster oldest first, insertion order breaking ties", () =>
        Effect.gen(function* () {
          const store = yield* Directory
          const [first, second, third] = [org(), org(), org()]
          const [ada, bob, cy] = [user(), user(), user()]
          for (const o of [first, second, third]) yield* store.createOrg(o)
          for (const u of [ada, bob, cy]) yield* store.createUser(u)
          const late = "2030-05-01T00:00:00.000Z"
          const early = "2030-04-01T00:00:00.000Z"
          yield* store.addMember(membership(third.id, ada.id, { createdAt: late }))
          yield* store.addMember(membership(first.id, ada.id, { createdAt: early }))
          yield* store.addMember(membership(second.id, ada.id, { createdAt: early }))
          assert.deepStrictEqual(
            (yield* store.membershipsOf(ada.id)).map((m) => [m.org, m.membership.orgId]),
            [
              [first, first.id],
              [second, second.id],
              [third, third.id]
            ]
          )
          yield* store.addMember(membership(first.id, cy.id, { createdAt: early }))
          yield* store.addMember(membership(first.id, bob.id, { createdAt: early }))
          assert.deepStrictEqual(
            (yield* store.roster(first.id)).map((entry) => entry.user),
            [ada, cy, bob]
          )
        })
      )

      it.effect("keeps one installation per org and app, replaced on save", () =>
        Effect.gen(function* () {
          const store = yield* Directory
          const acme = org()
          yield* store.createOrg(acme)
          const tasks = installation(acme.id, "tasks")
          yield* store.saveInstallation(installation(acme.id, "decisions"))
          yield* store.saveInstallation(tasks)
          assert.deepStrictEqual(yield* store.findInstallation(acme.id, "tasks"), tasks)
          const reconsented = {
            ...tasks,
            active: false,
            epoch: 1_900_000_500,
            consents: { companyId: false, accessClaims: true, embed: false },
            permissions: [],
            updatedAt: "2030-02-01T00:00:00.000Z"
          }
          yield* store.saveInstallation(reconsented)
          assert.deepStrictEqual(yield* store.findInstallation(acme.id, "tasks"), reconsented)
          assert.deepStrictEqual(
            (yield* store.installationsOf(acme.id)).map((i) => i.serviceId),
            ["decisions", "tasks"]
          )
          assert.isUndefined(yield* store.findInstallation(acme.id, "other"))
          assert.deepStrictEqual(yield* store.installationsOf(org().id), [])
        })
      )

      it.effect("keeps one flag setting per flag and scope, an org's override beside the global one", () =>
        Effect.gen(function* () {
          const store = yield* Directory
          const orgId = `org_${nextId()}`
          yield* store.setFlag({ name: "developer-platform", orgId, enabled: true })
          yield* store.setFlag({ name: "developer-platform", orgId, enabled: false })
          yield* store.setFlag({ name: "access-claims", orgId: null, enabled: true })
          yield* store.setFlag({ name: "access-claims", orgId: null, enabled: false })
          const flags = yield* store.flags()
          assert.deepStrictEqual(
            flags.filter((f) => f.orgId === orgId),
            [{ name: "developer-platform", orgId, enabled: false }]
          )
          assert.deepStrictEqual(
            flags.filter((f) => f.name === "access-claims" && f.orgId === null),
            [{ name: "access-claims", orgId: null, enabled: false }]
          )
        })
      )

      it.effect("answers the default preferences until saved, then the saved ones", () =>
        Effect.gen(function* () {
          const store = yield* Directory
          const ada = user()
          yield* store.createUser(ada)
          assert.deepStrictEqual(yield* store.preferences(ada.id), defaultPreferences)
          const chosen = { serviceVisible: { tasks: false, decisions: true }, channels: ["push", "chat"] as const }
          yield* store.savePreferences(ada.id, chosen)
          assert.deepStrictEqual(yield* store.preferences(ada.id), chosen)
          yield* store.savePreferences(ada.id, { serviceVisible: {}, channels: [] })
          assert.deepStrictEqual(yield* store.preferences(ada.id), { serviceVisible: {}, channels: [] })
        })
      )

      it.effect(
        "answers the recipients of a batch of notifications: users by address with their preferences, in one read",
        () =>
          Effect.gen(function* () {
            const store = yield* Directory
            const ada = user()
            const bob = user()
            yield* store.createUser(ada)
            yield* store.createUser(bob)
            assert.deepStrictEqual(yield* store.recipients([]), new Map())
            assert.deepStrictEqual(
              yield* store.recipients([ada.email]),
              new Map([[ada.email, { user: ada, preferences: defaultPreferences }]])
            )
            const chosen = {
              serviceVisible: { tasks: false },
              channels: ["email"] as const,
              emailMode: "immediate" as const
            }
            yield* store.savePreferences(ada.id, chosen)
            const nobody = `nobody-${ada.email}`
            // An address twice, and one no user has (absent from the answer).
            const found = yield* store.recipients([ada.email, nobody, bob.email, ada.email])
            assert.deepStrictEqual(
              [...found.entries()].sort(([a], [b]) => (a < b ? -1 : 1)),
              [
                [ada.email, { user: ada, preferences: chosen }],
                [bob.email, { user: bob, preferences: defaultPreferences }]
              ].sort(([a], [b]) => ((a as string) < (b as string) ? -1 : 1))
            )
            assert.deepStrictEqual(found.get(ada.email), {
              user: (yield* store.findUserByEmail(ada.email))!,
              preferences: yield* store.preferences(ada.id)
            })
            assert.isFalse(found.has(nobody))
          })
      )
    }))
