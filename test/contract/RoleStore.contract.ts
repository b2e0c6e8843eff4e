import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { randomUUID } from "node:crypto"
import { monotonicFactory } from "ulid"
import type { Assignment } from "../../core/decisions/Role.ts"
import { RoleStore, type NewRole } from "../../core/decisions/RoleStore.ts"

// The suite shares one store: every test works in organizations of its own.
const freshOrganization = () => `org_${randomUUID()}`
const nextId = monotonicFactory()
const at = (minute: number) => `2030-01-01T10:${String(minute).padStart(2, "0")}:00.000Z`

const newRole = (organizationId: string, slug: string, fields: Partial<NewRole> = {}): NewRole => ({
  id: nextId(),
  organizationId,
  slug,
  name: `The ${slug} role`,
  createdAt: at(0),
  ...fields
})

const assignment = (memberEmail: string, minute = 1, addedBy = "admin@example.com"): Assignment => ({
  memberEmail,
  addedBy,
  addedAt: at(minute)
})

/** The RoleStore port's contract (core/decisions/RoleStore.ts), run once per adapter. */
export const RoleStoreContract = (name: string, store: Layer.Layer<RoleStore, unknown>) =>
  describe(`RoleStore contract (${name})`, () =>
    layer(store, { excludeTestServices: true })((it) => {
      it.effect("create answers true and get answers the role, with no members and no description unless given", () =>
        Effect.gen(function* () {
          const roles = yield* RoleStore
          const org = freshOrganization()
          const plain = newRole(org, "finance")
          const described = newRole(org, "legal", { description: `Contracts, "NDAs" & Zoë's ✓`, createdAt: at(2) })
          assert.isTrue(yield* roles.create(plain))
          assert.isTrue(yield* roles.create(described))
          const got = yield* roles.get(org, "finance")
          assert.deepStrictEqual(got, {
            id: plain.id,
            slug: "finance",
            name: plain.name,
            memberCount: 0,
            createdAt: at(0)
          })
          assert.deepStrictEqual(Object.keys(got!).sort(), ["createdAt", "id", "memberCount", "name", "slug"])
          assert.deepStrictEqual(yield* roles.get(org, "legal"), {
            id: described.id,
            slug: "legal",
            name: described.name,
            description: described.description!,
            memberCount: 0,
            createdAt: at(2)
          })
          assert.isUndefined(yield* roles.get(org, "unknown"))
        })
      )

      it.effect("create answers false for a slug the organization already has, and the first role stays", () =>
        Effect.gen(function* () {
          const roles = yield* RoleStore
          const [org, other] = [freshOrganization(), freshOrganization()]
          const first = newRole(org, "finance", { description: "first" })
          assert.isTrue(yield* roles.create(first))
          assert.isFalse(yield* roles.create(newRole(org, "finance", { name: "Second", createdAt: at(9) })))
          const kept = yield* roles.get(org, "finance")
          assert.strictEqual(kept?.id, first.id)
          assert.strictEqual(kept?.name, first.name)
          assert.strictEqual(kept?.description, "first")
          // Slugs are unique per organization only.
          const theirs = newRole(other, "finance", { name: "Their finance" })
          assert.isTrue(yield* roles.create(theirs))
          assert.strictEqual((yield* roles.get(other, "finance"))?.name, "Their finance")
          assert.strictEqual((yield* roles.get(org, "finance"))?.name, first.name)
        })
      )

      it.effect("list answers the organization's roles, archived ones too, in slug order", () =>
        Effect.gen(function* () {
          const roles = yield* RoleStore
          const [org, other] = [freshOrganization(), freshOrganization()]
          for (const slug of ["ops", "a1", "b-team", "ab", "a-b"]) yield* roles.create(newRole(org, slug))
          yield* roles.create(newRole(other, "zz"))
          yield* roles.archive(org, "ops", at(5))
          yield* roles.assign(org, "ab", assignment("ada@example.com"))
          const listed = yield* roles.list(org)
          assert.deepStrictEqual(
            listed.map((r) => r.slug),
            ["a-b", "a1", "ab", "b-team", "ops"]
          )
          assert.strictEqual(listed.find((r) => r.slug === "ops")?.archivedAt, at(5))
          assert.strictEqual(listed.find((r) => r.slug === "ab")?.memberCount, 1)
          assert.deepStrictEqual(yield* roles.list(freshOrganization()), [])
        })
      )

      it.effect(
        "update changes the name and the description; an absent field is kept and a null description cleared",
        () =>
          Effect.gen(function* () {
            const roles = yield* RoleStore
            const org = freshOrganization()
            const role = newRole(org, "finance", { description: "Money" })
            yield* roles.create(role)
            yield* roles.assign(org, "finance", assignment("ada@example.com"))

            const renamed = yield* roles.update(org, "finance", { name: "Finance team" })
            assert.deepStrictEqual(renamed, {
              id: role.id,
              slug: "finance",
              name: "Finance team",
              description: "Money",
              memberCount: 1,
              createdAt: at(0)
            })
            const redescribed = yield* roles.update(org, "finance", { description: "Money matters" })
            assert.strictEqual(redescribed?.name, "Finance team")
            assert.strictEqual(redescribed?.description, "Money matters")
            const cleared = yield* roles.update(org, "finance", { description: null })
            assert.isDefined(cleared)
            assert.notProperty(cleared, "description")
            assert.strictEqual(cleared?.name, "Finance team")
            assert.deepStrictEqual(yield* roles.get(org, "finance"), cleared)
            // Nothing to change answers the role as it is.
            assert.deepStrictEqual(yield* roles.update(org, "finance", {}), cleared)
            const both = yield* roles.update(org, "finance", { name: "F", description: "" })
            assert.strictEqual(both?.name, "F")
            assert.strictEqual(both?.description, "")
          })
      )

      it.effect("update of a role that does not exist, or of another organization's, answers undefined", () =>
        Effect.gen(function* () {
          const roles = yield* RoleStore
          const [org, other] = [freshOrganization(), freshOrganization()]
          yield* roles.create(newRole(org, "finance"))
          assert.isUndefined(yield* roles.update(org, "unknown", { name: "X" }))
          assert.isUndefined(yield* roles.update(other, "finance", { name: "Hijacked", description: null }))
          assert.strictEqual((yield* roles.get(org, "finance"))?.name, "The finance role")
          assert.isUndefined(yield* roles.get(other, "finance"))
        })
      )

      it.effect("archive dates the role once: archiving again keeps the first archivedAt", () =>
        Effect.gen(function* () {
          const roles = yield* RoleStore
          const [org, other] = [freshOrganization(), freshOrganization()]
          yield* roles.create(newRole(org, "finance"))
          yield* roles.assign(org, "finance", assignment("ada@example.com"))
          const archived = yield* roles.archive(org, "finance", at(10))
          assert.strictEqual(archived?.archivedAt, at(10))
          assert.strictEqual(archived?.memberCount, 1)
          assert.strictEqual((yield* roles.archive(org, "finance", at(20)))?.archivedAt, at(10))
          assert.strictEqual((yield* roles.get(org, "finance"))?.archivedAt, at(10))
          assert.isUndefined(yield* roles.archive(org, "unknown", at(10)))
          assert.isUndefined(yield* roles.archive(other, "finance", at(30)))
          assert.strictEqual((yield* roles.get(org, "finance"))?.archivedAt, at(10))
        })
      )

      it.effect("assign is idempotent: assigning a member again keeps the first assignment", () =>
        Effect.gen(function* () {
          const roles = yield* RoleStore
          const org = freshOrganization()
          yield* roles.create(newRole(org, "finance"))
          const first = assignment("ada@example.com", 1, "admin@example.com")
          yield* roles.assign(org, "finance", first)
          yield* roles.assign(org, "finance", assignment("ada@example.com", 7, "other-admin@example.com"))
          assert.deepStrictEqual(yield* roles.assignments(org, "finance"), [first])
          assert.strictEqual((yield* roles.get(org, "finance"))?.memberCount, 1)
        })
      )

      it.effect("assignments are listed in email order and counted in memberCount", () =>
        Effect.gen(function* () {
          const roles = yield* RoleStore
          const org = freshOrganization()
          yield* roles.create(newRole(org, "finance"))
          const emails = ["b@example.com", "a_b@example.com", "a@example.com", "a.b@example.com", "a1@example.com"]
          for (const [i, email] of emails.entries()) yield* roles.assign(org, "finance", assignment(email, i))
          // Code-unit order, the same on every machine: "." < "1" < "@" < "_" < "b".
          assert.deepStrictEqual(
            (yield* roles.assignments(org, "finance")).map((a) => a.memberEmail),
            ["a.b@example.com", "a1@example.com", "a@example.com", "a_b@example.com", "b@example.com"]
          )
          assert.deepStrictEqual((yield* roles.assignments(org, "finance"))[0], assignment("a.b@example.com", 3))
          assert.strictEqual((yield* roles.get(org, "finance"))?.memberCount, 5)
          assert.deepStrictEqual(yield* roles.assignments(org, "unknown"), [])
          // The role and its holders read at once answer the same as the two reads.
          assert.deepStrictEqual(yield* roles.getWithHolders(org, "finance"), {
            role: (yield* roles.get(org, "finance"))!,
            holders: ["a.b@example.com", "a1@example.com", "a@example.com", "a_b@example.com", "b@example.com"]
          })
          assert.deepStrictEqual(yield* roles.getWithHolders(org, "unknown"), undefined)
          yield* roles.create(newRole(org, "empty"))
          assert.deepStrictEqual(yield* roles.getWithHolders(org, "empty"), {
            role: (yield* roles.get(org, "empty"))!,
            holders: []
          })
          assert.deepStrictEqual(yield* roles.getWithHolders(freshOrganization(), "finance"), undefined)
        })
      )

      it.effect("assigning to a role that does not exist does nothing", () =>
        Effect.gen(function* () {
          const roles = yield* RoleStore
          const org = freshOrganization()
          yield* roles.assign(org, "ghost", assignment("ada@example.com"))
          assert.deepStrictEqual(yield* roles.assignments(org, "ghost"), [])
          assert.isUndefined(yield* roles.get(org, "ghost"))
          assert.deepStrictEqual(yield* roles.heldBy(org, "ada@example.com"), [])
          // Created later, the role starts with no members.
          yield* roles.create(newRole(org, "ghost"))
          assert.deepStrictEqual(yield* roles.assignments(org, "ghost"), [])
        })
      )

      it.effect("unassign answers whether the member held the role, and removes them", () =>
        Effect.gen(function* () {
          const roles = yield* RoleStore
          const org = freshOrganization()
          yield* roles.create(newRole(org, "finance"))
          yield* roles.assign(org, "finance", assignment("ada@example.com"))
          yield* roles.assign(org, "finance", assignment("bob@example.com"))
          assert.isTrue(yield* roles.unassign(org, "finance", "ada@example.com"))
          assert.isFalse(yield* roles.unassign(org, "finance", "ada@example.com"))
          assert.isFalse(yield* roles.unassign(org, "finance", "carol@example.com"))
          assert.isFalse(yield* roles.unassign(org, "unknown", "bob@example.com"))
          assert.deepStrictEqual(
            (yield* roles.assignments(org, "finance")).map((a) => a.memberEmail),
            ["bob@example.com"]
          )
          assert.strictEqual((yield* roles.get(org, "finance"))?.memberCount, 1)
          // Assigned again after removal, the member has a new assignment.
          yield* roles.assign(org, "finance", assignment("ada@example.com", 30))
          assert.deepStrictEqual((yield* roles.assignments(org, "finance"))[0], assignment("ada@example.com", 30))
        })
      )

      it.effect("heldBy answers the active roles an email holds in the organization", () =>
        Effect.gen(function* () {
          const roles = yield* RoleStore
          const [org, other] = [freshOrganization(), freshOrganization()]
          for (const slug of ["finance", "legal", "ops", "support"]) yield* roles.create(newRole(org, slug))
          yield* roles.create(newRole(other, "finance"))
          for (const slug of ["finance", "legal", "ops"]) yield* roles.assign(org, slug, assignment("ada@example.com"))
          yield* roles.assign(org, "support", assignment("bob@example.com"))
          yield* roles.assign(other, "finance", assignment("bob@example.com"))
          yield* roles.archive(org, "ops", at(3))
          const held = (organizationId: string, email: string) =>
            Effect.map(roles.heldBy(organizationId, email), (slugs) => [...slugs].sort())
          assert.deepStrictEqual(yield* held(org, "ada@example.com"), ["finance", "legal"])
          assert.deepStrictEqual(yield* held(org, "bob@example.com"), ["support"])
          assert.deepStrictEqual(yield* held(other, "bob@example.com"), ["finance"])
          assert.deepStrictEqual(yield* held(other, "ada@example.com"), [])
          assert.deepStrictEqual(yield* held(org, "carol@example.com"), [])
          yield* roles.unassign(org, "legal", "ada@example.com")
          assert.deepStrictEqual(yield* held(org, "ada@example.com"), ["finance"])
        })
      )

      it.effect("the same slug in two organizations has members of its own", () =>
        Effect.gen(function* () {
          const roles = yield* RoleStore
          const [org, other] = [freshOrganization(), freshOrganization()]
          yield* roles.create(newRole(org, "finance"))
          yield* roles.create(newRole(other, "finance"))
          yield* roles.assign(org, "finance", assignment("ada@example.com"))
          assert.deepStrictEqual(yield* roles.assignments(other, "finance"), [])
          assert.strictEqual((yield* roles.get(other, "finance"))?.memberCount, 0)
          assert.isFalse(yield* roles.unassign(other, "finance", "ada@example.com"))
          assert.strictEqual((yield* roles.get(org, "finance"))?.memberCount, 1)
          yield* roles.archive(other, "finance", at(4))
          assert.isUndefined((yield* roles.get(org, "finance"))?.archivedAt)
        })
      )
    }))
