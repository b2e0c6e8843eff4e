import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { verify } from "../../core/auth/IdentityToken.ts"
import { request, type Answer } from "../support/Http.ts"
import { adminKey, issuer, serveAdmin } from "../support/HubAdmin.ts"

/** Where a validation error says a bad field is: `[in, field]`. */
const placeOf = (issue: { readonly in: string; readonly field: string }) => [issue.in, issue.field]

const json = (body: unknown) => JSON.stringify(body)

/** A client of one served operator group, with the admin key unless told otherwise. */
const client = (baseUrl: string, key: string | null = adminKey) => ({
  call: (method: string, path: string, body?: unknown) =>
    request(`${baseUrl}${path}`, {
      method,
      headers: {
        ...(key === null ? {} : { authorization: `Bearer ${key}` }),
        ...(body === undefined ? {} : { "content-type": "application/json" })
      },
      ...(body === undefined ? {} : { body: json(body) })
    })
})

const setUp = Effect.gen(function* () {
  const served = yield* serveAdmin()
  return { ...served, api: client(served.baseUrl) }
})

const passingReport = {
  ranAt: "2030-01-01T00:00:00.000Z",
  passed: true,
  checks: [{ name: "health", passed: true }]
}

describe("hub operator API", () => {
  it.live("answers a missing and a wrong admin key with the identical 401, and 501 when no key is set", () =>
    Effect.gen(function* () {
      const { baseUrl } = yield* serveAdmin()
      const missing = yield* client(baseUrl, null).call("GET", "/api/v1/admin/services")
      const wrong = yield* client(baseUrl, `${adminKey}x`).call("GET", "/api/v1/admin/services")
      const wrongOnWrite = yield* client(baseUrl, "nope").call("POST", "/api/v1/admin/orgs", { name: "Acme" })
      assert.strictEqual(missing.status, 401)
      assert.strictEqual(wrong.status, 401)
      assert.strictEqual(missing.json.error.code, "UNAUTHORIZED")
      assert.strictEqual(wrong.text, missing.text)
      assert.strictEqual(wrongOnWrite.text, missing.text)
      // The key under another scheme, an empty bearer, the key with a suffix: the same answer, headers too.
      const headersOf = (answer: Answer) => [...answer.headers].filter(([name]) => name !== "date")
      for (const authorization of [`Basic ${adminKey}`, "Bearer ", `Bearer ${adminKey} x`, adminKey]) {
        const answer = yield* request(`${baseUrl}/api/v1/admin/services`, { headers: { authorization } })
        assert.strictEqual(answer.status, 401, authorization)
        assert.strictEqual(answer.text, missing.text)
        assert.deepStrictEqual(headersOf(answer), headersOf(missing))
      }
      assert.deepStrictEqual(headersOf(wrong), headersOf(missing))

      const unset = yield* serveAdmin({ adminKey: undefined })
      const notConfigured = yield* client(unset.baseUrl).call("GET", "/api/v1/admin/services")
      assert.strictEqual(notConfigured.status, 501)
      assert.strictEqual(notConfigured.json.error.code, "NOT_CONFIGURED")
    })
  )

  it.live("creates, reads and changes organizations; status is merged > archived > active, deleted beats all", () =>
    Effect.gen(function* () {
      const { api } = yield* setUp
      const created = yield* api.call("POST", "/api/v1/admin/orgs", { name: "  Acme  " })
      assert.strictEqual(created.status, 201)
      const org = created.json.data.org
      assert.deepInclude(org, { name: "Acme", tier: "free", status: "active", archivedAt: null, deletedAt: null })
      assert.deepStrictEqual(created.json.data.members, [])
      const survivor = (yield* api.call("POST", "/api/v1/admin/orgs", { name: "Globex", tier: "monthly" })).json.data
        .org
      assert.strictEqual(survivor.tier, "monthly")

      const read = yield* api.call("GET", `/api/v1/admin/orgs/${org.id}`)
      assert.strictEqual(read.status, 200)
      assert.deepStrictEqual(read.json.data.org, org)

      const patch = (body: unknown) => api.call("PATCH", `/api/v1/admin/orgs/${org.id}`, body)
      const archived = yield* patch({ archived: true, tier: "hourly" })
      assert.deepInclude(archived.json.data.org, { status: "archived", tier: "hourly" })
      const merged = yield* patch({ mergedIntoOrgId: survivor.id })
      assert.deepInclude(merged.json.data.org, { status: "merged", mergedIntoOrgId: survivor.id })
      assert.strictEqual((yield* patch({ mergedIntoOrgId: null })).json.data.org.status, "archived")
      assert.strictEqual((yield* patch({ archived: false })).json.data.org.status, "active")

      const intoItself = yield* patch({ mergedIntoOrgId: org.id })
      assert.strictEqual(intoItself.status, 400)
      assert.strictEqual(intoItself.json.error.code, "VALIDATION_ERROR")
      assert.deepStrictEqual(intoItself.json.error.details.map(placeOf), [["body", "mergedIntoOrgId"]])
      assert.strictEqual((yield* patch({ mergedIntoOrgId: "org_missing" })).status, 400)
      // A refused patch changes nothing, not even its valid fields.
      const half = yield* patch({ tier: "free", archived: true, mergedIntoOrgId: "org_missing" })
      assert.strictEqual(half.status, 400)
      assert.deepInclude((yield* api.call("GET", `/api/v1/admin/orgs/${org.id}`)).json.data.org, {
        status: "active",
        tier: "hourly",
        archivedAt: null
      })

      const deleted = yield* patch({ deleted: true })
      assert.strictEqual(deleted.json.data.org.status, "deleted")
      assert.isString(deleted.json.data.org.deletedAt)
    })
  )

  it.live("answers bad organization input with 400 naming each field, and unknown ids with 404", () =>
    Effect.gen(function* () {
      const { api } = yield* setUp
      const bad = yield* api.call("POST", "/api/v1/admin/orgs", { name: "", tier: "gold" })
      assert.strictEqual(bad.status, 400)
      assert.strictEqual(bad.json.error.code, "VALIDATION_ERROR")
      assert.deepStrictEqual(bad.json.error.details.map((d: { field: string }) => d.field).sort(), ["name", "tier"])
      const blank = yield* api.call("POST", "/api/v1/admin/orgs", { name: "   " })
      assert.strictEqual(blank.status, 400)
      assert.deepStrictEqual(blank.json.error.details.map(placeOf), [["body", "name"]])
      assert.strictEqual((yield* api.call("PATCH", "/api/v1/admin/orgs/org_x", { deleted: false })).status, 400)

      for (const [method, body] of [
        ["GET", undefined],
        ["PATCH", { archived: true }]
      ] as const) {
        const missing = yield* api.call(method, "/api/v1/admin/orgs/org_missing", body)
        assert.strictEqual(missing.status, 404)
        assert.strictEqual(missing.json.error.code, "NOT_FOUND")
      }
    })
  )

  it.live("creates users once per normalised email and manages members", () =>
    Effect.gen(function* () {
      const { api } = yield* setUp
      const orgId = (yield* api.call("POST", "/api/v1/admin/orgs", { name: "Acme" })).json.data.org.id
      const user = yield* api.call("POST", "/api/v1/admin/users", { email: " Ada@Example.COM ", name: "Ada" })
      assert.strictEqual(user.status, 201)
      assert.deepInclude(user.json.data.user, { email: "ada@example.com", name: "Ada", verified: false })
      const taken = yield* api.call("POST", "/api/v1/admin/users", { email: "ADA@example.com", name: "Other" })
      assert.strictEqual(taken.status, 409)
      assert.strictEqual(taken.json.error.code, "CONFLICT")
      const badEmail = yield* api.call("POST", "/api/v1/admin/users", { email: "not-an-email", name: "X" })
      assert.strictEqual(badEmail.status, 400)
      assert.strictEqual(badEmail.json.error.details[0].field, "email")

      const members = `/api/v1/admin/orgs/${orgId}/members`
      const added = yield* api.call("POST", members, { email: "ada@example.com", role: "ADMIN" })
      assert.strictEqual(added.status, 201)
      assert.deepInclude(added.json.data.member, { email: "ada@example.com", role: "ADMIN", department: null })
      assert.strictEqual((yield* api.call("POST", members, { email: "ada@example.com", role: "MEMBER" })).status, 409)
      assert.strictEqual((yield* api.call("POST", members, { email: "bob@example.com", role: "MEMBER" })).status, 404)
      assert.strictEqual(
        (yield* api.call("POST", "/api/v1/admin/orgs/org_missing/members", {
          email: "ada@example.com",
          role: "MEMBER"
        })).status,
        404
      )
      assert.strictEqual((yield* api.call("POST", members, { email: "ada@example.com", role: "KING" })).status, 400)

      const finance = { id: "dep_1", slug: "finance", name: "Finance" }
      const updated = yield* api.call("PATCH", `${members}/ADA%40example.com`, {
        role: "OWNER",
        department: finance,
        departmentRole: { id: "rol_1", slug: "controller", name: "Controller" },
        roles: ["controller"]
      })
      assert.strictEqual(updated.status, 200)
      assert.deepInclude(updated.json.data.member, {
        role: "OWNER",
        department: finance,
        departments: ["finance"],
        roles: ["controller"]
      })
      const roleWithoutDepartment = yield* api.call("PATCH", `${members}/ada@example.com`, { department: null })
      assert.strictEqual(roleWithoutDepartment.status, 400)
      assert.deepStrictEqual(roleWithoutDepartment.json.error.details.map(placeOf), [["body", "departmentRole"]])
      const tooMany = yield* api.call("PATCH", `${members}/ada@example.com`, {
        roles: ["a", "b", "c", "d", "e", "f", "g", "h", "i"]
      })
      assert.strictEqual(tooMany.status, 400)
      assert.strictEqual((yield* api.call("PATCH", `${members}/bob@example.com`, { role: "VIEWER" })).status, 404)

      const roster = (yield* api.call("GET", `/api/v1/admin/orgs/${orgId}`)).json.data.members
      assert.deepStrictEqual(
        roster.map((m: { email: string; role: string }) => [m.email, m.role]),
        [["ada@example.com", "OWNER"]]
      )
      const removed = yield* api.call("DELETE", `${members}/ada@example.com`)
      assert.deepStrictEqual(removed.json, { data: { removed: true } })
      assert.strictEqual((yield* api.call("DELETE", `${members}/ada@example.com`)).status, 404)
    })
  )

  it.live("installs registered apps only, moves the epoch on re-consent and uninstall, and sets flags", () =>
    Effect.gen(function* () {
      const { api, directory } = yield* setUp
      const orgId = (yield* api.call("POST", "/api/v1/admin/orgs", { name: "Acme" })).json.data.org.id
      const path = `/api/v1/admin/orgs/${orgId}/installations/invoices`
      const grant = { consents: { companyId: true, accessClaims: true, embed: false }, permissions: ["invoices.read"] }
      const unregistered = yield* api.call("PUT", path, grant)
      assert.strictEqual(unregistered.status, 404)

      yield* api.call("POST", "/api/v1/admin/services", {
        id: "invoices",
        displayName: "Invoices",
        baseUrl: "https://invoices.example.com"
      })
      const installed = yield* api.call("PUT", path, grant)
      assert.strictEqual(installed.status, 200)
      assert.deepInclude(installed.json.data.installation, { serviceId: "invoices", active: true, epoch: 0 })
      const before = Math.floor(Date.now() / 1000)
      const reconsented = yield* api.call("PUT", path, { consents: { ...grant.consents, embed: true } })
      assert.isAtLeast(reconsented.json.data.installation.epoch, before)
      assert.deepStrictEqual(reconsented.json.data.installation.permissions, [])
      const foreign = yield* api.call("PUT", path, { ...grant, permissions: ["tasks.read"] })
      assert.strictEqual(foreign.status, 400)
      assert.deepStrictEqual(foreign.json.error.details.map(placeOf), [["body", "permissions"]])

      const uninstalled = yield* api.call("DELETE", path)
      assert.deepInclude(uninstalled.json.data.installation, { active: false })
      assert.isAtLeast(uninstalled.json.data.installation.epoch, before)
      assert.strictEqual((yield* api.call("DELETE", path)).status, 404)
      assert.strictEqual((yield* directory.findInstallation(orgId, "invoices"))?.active, false)

      const global = yield* api.call("PUT", "/api/v1/admin/flags/access-claims", { enabled: true })
      assert.deepStrictEqual(global.json, { data: { flag: { name: "access-claims", orgId: null, enabled: true } } })
      const perOrg = yield* api.call("PUT", "/api/v1/admin/flags/developer-platform", { enabled: false, orgId })
      assert.deepStrictEqual(perOrg.json.data.flag, { name: "developer-platform", orgId, enabled: false })
      assert.strictEqual(
        (yield* api.call("PUT", "/api/v1/admin/flags/access-claims", { enabled: true, orgId: "org_missing" })).status,
        404
      )
      const madeUp = yield* api.call("PUT", "/api/v1/admin/flags/made-up", { enabled: true })
      assert.strictEqual(madeUp.status, 400)
      assert.deepStrictEqual(madeUp.json.error.details.map(placeOf), [["path", "name"]])
    })
  )

  it.live(
    "registers a service, shows its credentials once, rotates them, and promotes only with a passing report",
    () =>
      Effect.gen(function* () {
        const { api, registry } = yield* setUp
        const registered = yield* api.call("POST", "/api/v1/admin/services", {
          id: "invoices",
          displayName: "Invoices",
          baseUrl: "https://invoices.example.com/"
        })
        assert.strictEqual(registered.status, 201)
        const { service, credentials } = registered.json.data
        assert.deepInclude(service, { id: "invoices", status: "draft", baseUrl: "https://invoices.example.com" })
        assert.notProperty(service, "version")
        const secrets = [credentials.apiKey, credentials.signingKey, credentials.embedKey] as Array<string>
        assert.strictEqual(new Set(secrets).size, 3)

        const duplicate = yield* api.call("POST", "/api/v1/admin/services", {
          id: "invoices",
          displayName: "Again",
          baseUrl: "https://invoices.example.com"
        })
        assert.strictEqual(duplicate.status, 409)
        // A platform service's id is taken before anyone registers it.
        for (const id of ["decisions", "tasks", "crm", "hub"]) {
          const reserved = yield* api.call("POST", "/api/v1/admin/services", {
            id,
            displayName: "Mine",
            baseUrl: "https://mine.example.com"
          })
          assert.strictEqual(reserved.status, 409, id)
          assert.strictEqual(reserved.json.error.code, "CONFLICT")
        }
        const invalid = yield* api.call("POST", "/api/v1/admin/services", {
          id: "In-Voices",
          displayName: "X",
          baseUrl: "http://invoices.example.com"
        })
        assert.strictEqual(invalid.status, 400)
        assert.deepStrictEqual(invalid.json.error.details.map(placeOf), [["body", "id"]])
        for (const id of ["in-voices-", "-invoices", "in--voices", "in_voices", "ab", "x".repeat(33)]) {
          const refused = yield* api.call("POST", "/api/v1/admin/services", {
            id,
            displayName: "X",
            baseUrl: "https://invoices.example.com"
          })
          assert.strictEqual(refused.status, 400, id)
          assert.deepStrictEqual(refused.json.error.details.map(placeOf), [["body", "id"]], id)
        }

        const one = yield* api.call("GET", "/api/v1/admin/services/invoices")
        const all = yield* api.call("GET", "/api/v1/admin/services")
        assert.strictEqual(one.json.data.service.id, "invoices")
        assert.deepStrictEqual(
          all.json.data.services.map((s: { id: string }) => s.id),
          ["invoices"]
        )
        for (const answer of [one, all]) for (const secret of secrets) assert.notInclude(answer.text, secret)
        assert.strictEqual((yield* api.call("GET", "/api/v1/admin/services/nothing")).status, 404)

        const rotated = yield* api.call("POST", "/api/v1/admin/services/invoices/credentials/embedKey/rotate")
        assert.strictEqual(rotated.status, 200)
        assert.strictEqual(rotated.json.data.kind, "embedKey")
        const opened = (yield* registry.credentials("invoices"))!.credentials
        assert.strictEqual(opened.embedKey, rotated.json.data.value)
        assert.notStrictEqual(opened.embedKey, credentials.embedKey)
        assert.strictEqual(opened.signingKey, credentials.signingKey)
        assert.strictEqual(
          (yield* api.call("POST", "/api/v1/admin/services/invoices/credentials/signingKey/rotate")).json.data.value,
          (yield* registry.credentials("invoices"))!.credentials.signingKey
        )
        assert.notStrictEqual((yield* registry.credentials("invoices"))!.credentials.signingKey, credentials.signingKey)
        assert.strictEqual(
          (yield* api.call("POST", "/api/v1/admin/services/invoices/credentials/password/rotate")).status,
          400
        )
        assert.strictEqual(
          (yield* api.call("POST", "/api/v1/admin/services/nothing/credentials/apiKey/rotate")).status,
          404
        )

        const refused = yield* api.call("POST", "/api/v1/admin/services/invoices/promote")
        assert.strictEqual(refused.status, 403)
        assert.strictEqual(refused.json.error.code, "FORBIDDEN")
        yield* registry.recordConformance("invoices", { ...passingReport, passed: false })
        assert.strictEqual((yield* api.call("POST", "/api/v1/admin/services/invoices/promote")).status, 403)
        yield* registry.recordConformance("invoices", passingReport)
        const promoted = yield* api.call("POST", "/api/v1/admin/services/invoices/promote")
        assert.strictEqual(promoted.status, 200)
        assert.strictEqual(promoted.json.data.service.status, "live")
        assert.deepStrictEqual(promoted.json.data.service.conformance, passingReport)
        const suspended = yield* api.call("POST", "/api/v1/admin/services/invoices/suspend")
        assert.strictEqual(suspended.json.data.service.status, "suspended")
        assert.strictEqual((yield* api.call("POST", "/api/v1/admin/services/nothing/promote")).status, 404)
        assert.strictEqual((yield* api.call("POST", "/api/v1/admin/services/nothing/suspend")).status, 404)
      })
  )

  it.live("registers every platform service id, hyphens and all, and installs it like any other service", () =>
    Effect.gen(function* () {
      const { api } = yield* setUp
      const ids = [
        "meeting-recaps",
        "onboarding-portal",
        "schema-analysis",
        "error-monitoring",
        "voice-to-action",
        "expert-sessions"
      ]
      for (const id of ids) {
        const registered = yield* api.call("POST", "/api/v1/admin/services", {
          id,
          displayName: id,
          baseUrl: `https://${id}.example.com`
        })
        assert.strictEqual(registered.status, 201, id)
        assert.strictEqual(registered.json.data.service.id, id)
        assert.strictEqual((yield* api.call("GET", `/api/v1/admin/services/${id}`)).json.data.service.id, id)
      }
      const orgId = (yield* api.call("POST", "/api/v1/admin/orgs", { name: "Acme" })).json.data.org.id
      const installed = yield* api.call("PUT", `/api/v1/admin/orgs/${orgId}/installations/schema-analysis`, {
        consents: { companyId: true, accessClaims: false, embed: false }
      })
      assert.strictEqual(installed.status, 200)
      assert.strictEqual(installed.json.data.installation.serviceId, "schema-analysis")
    })
  )

  it.live("mints identity tokens that verify for the service's audience only, scoped to the user's organizations", () =>
    Effect.gen(function* () {
      const { api, registry } = yield* setUp
      const { credentials } = (yield* api.call("POST", "/api/v1/admin/services", {
        id: "invoices",
        displayName: "Invoices",
        baseUrl: "https://invoices.example.com"
      })).json.data
      const orgId = (yield* api.call("POST", "/api/v1/admin/orgs", { name: "Acme", tier: "hourly" })).json.data.org.id
      const otherOrgId = (yield* api.call("POST", "/api/v1/admin/orgs", { name: "Other" })).json.data.org.id
      yield* api.call("POST", "/api/v1/admin/users", { email: "ada@example.com", name: "Ada" })
      yield* api.call("POST", `/api/v1/admin/orgs/${orgId}/members`, { email: "ada@example.com", role: "ADMIN" })

      const minted = yield* api.call("POST", "/api/v1/admin/tokens", {
        service: "invoices",
        email: "Ada@Example.com",
        companyId: orgId
      })
      assert.strictEqual(minted.status, 200)
      const { token, expiresAt } = minted.json.data
      const nowSeconds = Math.floor(Date.now() / 1000)
      const check = (audience: string, key = credentials.embedKey as string) =>
        Effect.result(verify({ token, key, issuer, audience, nowSeconds }))
      const verified = yield* verify({ token, key: credentials.embedKey, issuer, audience: "invoices", nowSeconds })
      assert.deepInclude(verified, { email: "ada@example.com", companyId: orgId, orgRole: "ADMIN", tier: "hourly" })
      assert.strictEqual(verified.expiresAt - verified.issuedAt, 300)
      assert.strictEqual(Date.parse(expiresAt) / 1000, verified.expiresAt)
      assert.isTrue((yield* check("decisions"))._tag === "Failure")

      const plain = yield* api.call("POST", "/api/v1/admin/tokens", { service: "invoices", email: "ada@example.com" })
      const unscoped = yield* verify({
        token: plain.json.data.token,
        key: credentials.embedKey,
        issuer,
        audience: "invoices",
        nowSeconds
      })
      assert.deepInclude(unscoped, { companyId: undefined, orgRole: undefined, tier: undefined })

      const notMember = yield* api.call("POST", "/api/v1/admin/tokens", {
        service: "invoices",
        email: "ada@example.com",
        companyId: otherOrgId
      })
      assert.strictEqual(notMember.status, 403)
      assert.strictEqual(notMember.json.error.code, "FORBIDDEN")
      // An organization that is archived (or merged, or deleted) scopes no token, even for its members.
      yield* api.call("PATCH", `/api/v1/admin/orgs/${orgId}`, { archived: true })
      const archived = yield* api.call("POST", "/api/v1/admin/tokens", {
        service: "invoices",
        email: "ada@example.com",
        companyId: orgId
      })
      assert.strictEqual(archived.status, 403)
      assert.strictEqual(archived.json.error.code, "FORBIDDEN")
      yield* api.call("PATCH", `/api/v1/admin/orgs/${orgId}`, { archived: false })
      const badEmail = yield* api.call("POST", "/api/v1/admin/tokens", { service: "invoices", email: "ada" })
      assert.strictEqual(badEmail.status, 400)
      assert.strictEqual(badEmail.json.error.code, "VALIDATION_ERROR")
      for (const body of [
        { service: "nothing", email: "ada@example.com" },
        { service: "invoices", email: "bob@example.com" }
      ]) {
        const missing = yield* api.call("POST", "/api/v1/admin/tokens", body)
        assert.strictEqual(missing.status, 404)
        assert.strictEqual(missing.json.error.code, "NOT_FOUND")
      }

      // Rotating the embed key makes every token signed with the old one unusable.
      yield* api.call("POST", "/api/v1/admin/services/invoices/credentials/embedKey/rotate")
      const rotatedKey = (yield* registry.credentials("invoices"))!.credentials.embedKey
      assert.isTrue((yield* check("invoices", rotatedKey))._tag === "Failure")
    })
  )
})
