import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { FactOutboxMemory } from "../../adapters/memory/hub/FactOutboxMemory.ts"
import { HubFacts } from "../../core/hub/HubFacts.ts"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { DirectoryMemory } from "../../adapters/memory/hub/DirectoryMemory.ts"
import { ServiceStoreMemory } from "../../adapters/memory/hub/ServiceStoreMemory.ts"
import { orgStatus, type Installation, type Membership, type Organization } from "../../core/hub/Directory.ts"
import { Identity } from "../../core/hub/Identity.ts"
import { checkMergeTarget, installOrReconsent, patchMembership, uninstalled } from "../../core/hub/IdentityRules.ts"
import { ServiceStore } from "../../core/hub/ServiceStore.ts"
import { ValidationError } from "../../core/kernel/Errors.ts"
import { IdGeneratorUlid } from "../../core/kernel/Ids.ts"

const org = (fields: Partial<Organization> = {}): Organization => ({
  id: "org_a",
  name: "Acme",
  tier: "free",
  createdAt: "2030-01-01T00:00:00.000Z",
  archivedAt: null,
  mergedIntoOrgId: null,
  deletedAt: null,
  ...fields
})

const member: Membership = {
  orgId: "org_a",
  userId: "u1",
  role: "MEMBER",
  department: null,
  departmentRole: null,
  departments: [],
  roles: [],
  createdAt: "2030-01-01T00:00:00.000Z"
}

const finance = { id: "dep_1", slug: "finance", name: "Finance" }
const controller = { id: "rol_1", slug: "controller", name: "Controller" }
const now = { seconds: 1_900_000_123, iso: "2030-03-17T17:35:23.000Z" }

describe("organization status", () => {
  it("is deleted over merged over archived over active, whatever else is set", () =>
    fc.assert(
      fc.property(fc.boolean(), fc.boolean(), fc.boolean(), (archived, merged, deleted) => {
        const status = orgStatus(
          org({
            archivedAt: archived ? "2030-02-01T00:00:00.000Z" : null,
            mergedIntoOrgId: merged ? "org_b" : null,
            deletedAt: deleted ? "2030-02-02T00:00:00.000Z" : null
          })
        )
        assert.strictEqual(status, deleted ? "deleted" : merged ? "merged" : archived ? "archived" : "active")
      })
    ))

  it("refuses a merge into itself, into nothing, or into a merged or deleted organization", () => {
    const target = org({ id: "org_b" })
    assert.isUndefined(checkMergeTarget(org(), target))
    assert.instanceOf(checkMergeTarget(org(), undefined), ValidationError)
    assert.instanceOf(checkMergeTarget(org(), org()), ValidationError)
    assert.instanceOf(checkMergeTarget(org(), { ...target, mergedIntoOrgId: "org_c" }), ValidationError)
    assert.instanceOf(checkMergeTarget(org(), { ...target, deletedAt: now.iso }), ValidationError)
    assert.isUndefined(checkMergeTarget(org(), { ...target, archivedAt: now.iso }))
  })
})

describe("membership patches", () => {
  it("refuses a department role without a department, set or left behind", () => {
    const refused = patchMembership(member, { departmentRole: controller })
    assert.instanceOf(refused, ValidationError)
    assert.deepStrictEqual((refused as ValidationError).details, [
      { in: "body", field: "departmentRole", message: "departmentRole needs a department." }
    ])
    const withBoth = patchMembership(member, { department: finance, departmentRole: controller }) as Membership
    assert.instanceOf(patchMembership(withBoth, { department: null }), ValidationError)
    assert.deepInclude(patchMembership(withBoth, { department: null, departmentRole: null }), {
      department: null,
      departmentRole: null
    })
  })

  it("keeps absent fields, lists the primary department among departments, and drops duplicate slugs", () => {
    const patched = patchMembership(member, {
      department: finance,
      departments: ["ops", "ops"],
      roles: ["lead"]
    }) as Membership
    assert.deepInclude(patched, { role: "MEMBER", departments: ["finance", "ops"], roles: ["lead"] })
    assert.deepStrictEqual(patchMembership(patched, { role: "ADMIN" }), { ...patched, role: "ADMIN" })
  })

  it("refuses more than 8 slugs, a bad slug and an unknown role", () => {
    const nine = Array.from({ length: 9 }, (_, i) => `d${i}`)
    assert.instanceOf(patchMembership(member, { departments: nine }), ValidationError)
    assert.instanceOf(patchMembership(member, { roles: nine }), ValidationError)
    assert.instanceOf(patchMembership(member, { department: finance, departments: nine.slice(1) }), ValidationError)
    assert.instanceOf(patchMembership(member, { roles: ["Not A Slug"] }), ValidationError)
    assert.instanceOf(patchMembership(member, { role: "KING" }), ValidationError)
  })
})

describe("installation epochs", () => {
  const target = { orgId: "org_a", serviceId: "invoices" }
  const grant = { consents: { companyId: true, accessClaims: true, embed: true }, permissions: ["invoices.read"] }
  const installed: Installation = { ...target, ...grant, active: true, epoch: 0, updatedAt: now.iso }

  it("starts a first install at 0, moves it to now on re-consent and uninstall, keeps it on reinstall", () => {
    assert.strictEqual(installOrReconsent(undefined, target, grant, now).epoch, 0)
    const reconsented = installOrReconsent(installed, target, { ...grant, permissions: [] }, now)
    assert.deepInclude(reconsented, { active: true, epoch: now.seconds, permissions: [] })
    const gone = uninstalled(installed, now)
    assert.deepInclude(gone, { active: false, epoch: now.seconds, consents: grant.consents })
    const later = { seconds: now.seconds + 60, iso: now.iso }
    assert.deepInclude(installOrReconsent(gone, target, grant, later), { active: true, epoch: now.seconds })
  })
})

const identityLayer = Identity.layer.pipe(
  Layer.provide(HubFacts.layer),
  Layer.provideMerge(Layer.mergeAll(DirectoryMemory, ServiceStoreMemory, FactOutboxMemory, IdGeneratorUlid))
)

layer(identityLayer)("Identity use cases", (it) => {
  it.effect("sets the epoch from the clock (unix seconds) on uninstall and re-consent", () =>
    Effect.gen(function* () {
      const identity = yield* Identity
      const store = yield* ServiceStore
      yield* store.create({
        service: {
          id: "invoices",
          displayName: "Invoices",
          baseUrl: "https://invoices.example.com",
          status: "draft",
          apiKeyHeader: "X-Workspace-Api-Key",
          resourcePath: "/api/v1/summary",
          firstParty: false,
          createdAt: now.iso,
          updatedAt: now.iso,
          version: 1,
          conformance: null
        },
        credentials: { apiKey: "a", signingKey: "b", embedKey: "c" }
      })
      const acme = yield* identity.createOrg({ name: "Acme" })
      const grant = { consents: { companyId: true, accessClaims: false, embed: false }, permissions: [] }
      yield* TestClock.setTime(now.seconds * 1000 + 999)
      assert.strictEqual((yield* identity.install(acme.id, "invoices", grant)).epoch, 0)
      assert.strictEqual((yield* identity.install(acme.id, "invoices", grant)).epoch, now.seconds)
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual((yield* identity.uninstall(acme.id, "invoices")).epoch, now.seconds + 10)
      const error = yield* Effect.flip(identity.install(acme.id, "unknown", grant))
      assert.strictEqual(error._tag, "NotFound")
    })
  )

  it.effect("empties the roster of a deleted organization, takes no new member there, and refuses a taken email", () =>
    Effect.gen(function* () {
      const identity = yield* Identity
      const acme = yield* identity.createOrg({ name: "Acme", tier: "monthly" })
      yield* identity.createUser({ email: "ada@example.com", name: "Ada" })
      yield* identity.addMember(acme.id, { email: "ADA@example.com", role: "OWNER" })
      assert.strictEqual((yield* identity.getOrg(acme.id)).roster.length, 1)
      yield* identity.updateOrg(acme.id, { deleted: true })
      const view = yield* identity.getOrg(acme.id)
      assert.strictEqual(view.status, "deleted")
      assert.deepStrictEqual(view.roster, [])
      const readd = yield* Effect.flip(identity.addMember(acme.id, { email: "ada@example.com", role: "OWNER" }))
      assert.deepStrictEqual([readd._tag, readd.message], ["Conflict", "The organization is deleted."])
      const taken = yield* Effect.flip(identity.createUser({ email: " Ada@Example.com", name: "Ada" }))
      assert.strictEqual(taken._tag, "Conflict")
    })
  )
})
