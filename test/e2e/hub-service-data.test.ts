import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted, type Scope } from "effect"
import { TestClock } from "effect/testing"
import { ExpertRosterHttp } from "../../adapters/http/hub/ExpertRosterHttp.ts"
import { DirectoryMemory } from "../../adapters/memory/hub/DirectoryMemory.ts"
import { noContextKeys } from "../../core/hub/ContextKeys.ts"
import { Directory } from "../../core/hub/Directory.ts"
import { ExpertRosterCached, ExpertRosterUnconfigured } from "../../core/hub/ExpertRoster.ts"
import { ShortenerOff } from "../../core/hub/ShortLinks.ts"
import { request } from "../support/Http.ts"
import {
  headersOf,
  keys,
  nowMs,
  nowSeconds,
  publicUrl,
  serveServiceData,
  signedGet,
  signedPost,
  type Signed
} from "../support/ServiceData.ts"
import { standIn, unreachableUrl, type StandInAnswer } from "../support/StandIn.ts"

const rosterKey = "expert-roster-internal-key-0123"

const at = new Date(nowMs - 86_400_000).toISOString()

/** Acme (active) with Ada (owner), Bo (viewer, unverified) and Cy; Old is archived and merged; Gone is deleted. */
const seed = Effect.gen(function* () {
  const directory = yield* Directory
  const org = { tier: "hourly" as const, createdAt: at, archivedAt: null, mergedIntoOrgId: null, deletedAt: null }
  yield* directory.createOrg({ ...org, id: "org-acme", name: "Acme" })
  yield* directory.createOrg({ ...org, id: "org-old", name: "Old", archivedAt: at, mergedIntoOrgId: "org-acme" })
  yield* directory.createOrg({ ...org, id: "org-shelved", name: "Shelved", archivedAt: at })
  yield* directory.createOrg({ ...org, id: "org-gone", name: "Gone", deletedAt: at })
  const people = [
    { id: "u-ada", email: "ada@acme.test", name: "Ada", verified: true },
    { id: "u-bo", email: "bo@acme.test", name: null, verified: false },
    { id: "u-cy", email: "cy@acme.test", name: null, verified: true }
  ]
  for (const person of people) yield* directory.createUser({ ...person, createdAt: at })
  const member = { department: null, departmentRole: null, departments: [], roles: [], createdAt: at }
  yield* directory.addMember({ ...member, orgId: "org-acme", userId: "u-ada", role: "OWNER" })
  yield* directory.addMember({ ...member, orgId: "org-acme", userId: "u-bo", role: "VIEWER" })
  yield* directory.addMember({ ...member, orgId: "org-acme", userId: "u-cy", role: "MEMBER" })
  yield* directory.addMember({ ...member, orgId: "org-gone", userId: "u-cy", role: "ADMIN" })
})

const roster = (baseUrl: string, query: string, options: Signed = {}) =>
  signedGet(baseUrl, "/api/v1/service-data/org-roster", query, { as: "crm", ...options })
const matched = (baseUrl: string, query: string, options: Signed = {}) =>
  signedGet(baseUrl, "/api/v1/service-data/matched-clients", query, { as: "meeting-recaps", ...options })
const shortLink = (baseUrl: string, body: unknown, options: Signed = {}) =>
  signedPost(baseUrl, "/api/v1/service-data/short-link", JSON.stringify(body), { as: "meeting-recaps", ...options })

const run = <A, E>(effect: Effect.Effect<A, E, Directory | Scope.Scope>) =>
  Effect.provide(
    Effect.gen(function* () {
      yield* TestClock.setTime(nowMs)
      yield* seed
      return yield* effect
    }),
    DirectoryMemory
  )

const rosterAnswer = {
  data: {
    clients: [
      { email: "client-one@example.test", activeEngineers: ["Eng@Experts.test", "other@experts.test"] },
      { email: "client-two@example.test", activeEngineers: ["other@experts.test"] },
      { email: "client-three@example.test", activeEngineers: ["eng@experts.test"] }
    ]
  }
}

/** The expert roster's stand-in: answers `answer` to its internal key, 401 to anything else. */
const rosterStandIn = (answer: () => StandInAnswer) =>
  standIn((seen) =>
    seen.headers["internalauthorization"] === rosterKey ? answer() : { status: 401, json: { error: "nope" } }
  )

const rosterOver = (url: string) =>
  ExpertRosterCached().pipe(Layer.provide(ExpertRosterHttp({ url: `${url}/roster`, key: Redacted.make(rosterKey) })))

describe("GET /api/v1/service-data/org-roster", () => {
  it.effect("answers the organization and its members with a verified email, lower-case roles, never cached", () =>
    run(
      Effect.gen(function* () {
        const { baseUrl } = yield* serveServiceData()
        const answer = yield* roster(baseUrl, "orgId=org-acme")
        assert.strictEqual(answer.status, 200)
        assert.strictEqual(answer.headers.get("cache-control"), "no-store")
        assert.deepStrictEqual(answer.json, {
          data: {
            org: { id: "org-acme", status: "active", name: "Acme", archivedAt: null, mergedIntoOrgId: null },
            members: [
              { email: "ada@acme.test", name: "Ada", role: "owner" },
              { email: "cy@acme.test", name: null, role: "member" }
            ]
          }
        })
      })
    )
  )

  it.effect("gives statuses by precedence, no members for a deleted organization, 404 and 400 for bad ids", () =>
    run(
      Effect.gen(function* () {
        const { baseUrl } = yield* serveServiceData()
        const old = yield* roster(baseUrl, "orgId=org-old")
        assert.deepStrictEqual(old.json.data.org, {
          id: "org-old",
          status: "merged",
          name: "Old",
          archivedAt: at,
          mergedIntoOrgId: "org-acme"
        })
        assert.strictEqual((yield* roster(baseUrl, "orgId=org-shelved")).json.data.org.status, "archived")
        const gone = yield* roster(baseUrl, "orgId=org-gone")
        assert.strictEqual(gone.json.data.org.status, "deleted")
        assert.deepStrictEqual(gone.json.data.members, [])
        const unknown = yield* roster(baseUrl, "orgId=org-never")
        assert.strictEqual(unknown.status, 404)
        assert.strictEqual(unknown.json.error.code, "NOT_FOUND")
        for (const query of ["", "orgId=", `orgId=${"x".repeat(65)}`]) {
          const bad = yield* roster(baseUrl, query)
          assert.strictEqual(bad.status, 400, query)
          assert.strictEqual(bad.json.error.code, "VALIDATION_ERROR")
        }
      })
    )
  )

  it.effect("fails closed: 501 without context keys, and 501 without an organization directory", () =>
    Effect.gen(function* () {
      const noKeys = yield* run(serveServiceData({ contextKeys: noContextKeys }))
      // Served where no directory exists at all.
      yield* TestClock.setTime(nowMs)
      const noDirectory = yield* serveServiceData({ directory: false })
      for (const answer of [
        yield* roster(noKeys.baseUrl, "orgId=org-acme"),
        yield* roster(noDirectory.baseUrl, "orgId=org-acme")
      ]) {
        assert.strictEqual(answer.status, 501)
        assert.strictEqual(answer.json.error.code, "NOT_CONFIGURED")
        assert.notProperty(answer.json, "data")
      }
    })
  )
})

describe("the signed service-data routes", () => {
  it.effect("answer the same 401 to a bad signature, a re-encoded or reordered query, and any other caller", () =>
    run(
      Effect.gen(function* () {
        const { baseUrl } = yield* serveServiceData()
        const refusals = [
          yield* roster(baseUrl, "orgId=org-acme", { key: "context-key-of-someone-else" }),
          // The signature covers the raw query string: a re-encoding or another order is not what was signed.
          yield* roster(baseUrl, "orgId=org%2Dacme", { signed: "orgId=org-acme" }),
          yield* roster(baseUrl, "orgId=org-acme&x=1", { signed: "x=1&orgId=org-acme" }),
          yield* matched(baseUrl, "email=eng%40experts.test", { signed: "email=eng@experts.test" }),
          // Correctly signed with their own keys, but not the route's caller.
          yield* roster(baseUrl, "orgId=org-acme", { caller: "meeting-recaps" }),
          yield* roster(baseUrl, "orgId=org-acme", { caller: "tasks" }),
          yield* roster(baseUrl, "orgId=org-acme", { caller: "decisions", key: keys["crm"] }),
          yield* matched(baseUrl, "email=eng@experts.test", { caller: "crm" }),
          yield* shortLink(baseUrl, { kind: "recording", slug: "abcdefghijklmnop" }, { caller: "onboarding-portal" }),
          yield* roster(baseUrl, "orgId=org-acme", { timestamp: nowSeconds - 301 })
        ]
        const first = refusals[0]!
        assert.deepStrictEqual(first.json, {
          error: { code: "UNAUTHORIZED", message: "Missing or invalid credentials." }
        })
        for (const answer of refusals) {
          assert.strictEqual(answer.status, 401)
          assert.strictEqual(answer.text, first.text)
          assert.deepStrictEqual(headersOf(answer), headersOf(first))
        }
        // The raw query, signed as sent, in any encoding the caller chose.
        assert.strictEqual((yield* roster(baseUrl, "orgId=org%2Dacme")).json.data.org.id, "org-acme")
        assert.strictEqual((yield* roster(baseUrl, "x=1&orgId=org-acme")).status, 200)
      })
    )
  )

  it.effect("answer 501 to every caller when no context key is configured", () =>
    run(
      Effect.gen(function* () {
        const { baseUrl } = yield* serveServiceData({ contextKeys: noContextKeys })
        for (const answer of [
          yield* matched(baseUrl, "email=eng@experts.test"),
          yield* shortLink(baseUrl, { kind: "recording", slug: "abcdefghijklmnop" }),
          yield* roster(baseUrl, "orgId=org-acme", { key: "k" })
        ]) {
          assert.strictEqual(answer.status, 501)
          assert.strictEqual(answer.json.error.code, "NOT_CONFIGURED")
        }
      })
    )
  )

  it.effect("answer 429 past a caller's quota, counting only verified requests", () =>
    run(
      Effect.gen(function* () {
        const { baseUrl } = yield* serveServiceData({ requestsPerMinute: 2 })
        for (let i = 0; i < 3; i++) {
          assert.strictEqual((yield* roster(baseUrl, "orgId=org-acme", { key: "forged-key-0123456789" })).status, 401)
        }
        for (let i = 0; i < 2; i++) assert.strictEqual((yield* roster(baseUrl, "orgId=org-acme")).status, 200)
        const limited = yield* roster(baseUrl, "orgId=org-acme")
        assert.strictEqual(limited.status, 429)
        assert.strictEqual(limited.json.error.code, "RATE_LIMITED")
        assert.strictEqual(limited.headers.get("retry-after"), "60")
        // Another caller keeps its own share.
        assert.strictEqual((yield* matched(baseUrl, "email=eng@experts.test")).status, 200)
      })
    )
  )
})

describe("GET /api/v1/service-data/matched-clients", () => {
  it.effect("answers the clients the engineer is matched to, sending the roster key, the read cached 60 s", () =>
    run(
      Effect.gen(function* () {
        const upstream = yield* rosterStandIn(() => ({ status: 200, json: rosterAnswer }))
        const { baseUrl } = yield* serveServiceData({ roster: rosterOver(upstream.url) })
        const answer = yield* matched(baseUrl, "email=eng%40experts.test")
        assert.strictEqual(answer.status, 200)
        assert.deepStrictEqual(answer.json, {
          data: { clients: ["client-one@example.test", "client-three@example.test"] }
        })
        assert.strictEqual(upstream.seen.length, 1)
        assert.strictEqual(upstream.seen[0]!.method, "GET")
        assert.strictEqual(upstream.seen[0]!.url, "/roster")
        const nobody = yield* matched(baseUrl, "email=client-one@example.test")
        assert.deepStrictEqual(nobody.json, { data: { clients: [] } })
        assert.strictEqual(upstream.seen.length, 1)

        upstream.answerWith(() => ({ status: 200, json: { data: { clients: [] } } }))
        yield* TestClock.adjust("59 seconds")
        const cached = yield* matched(baseUrl, "email=eng@experts.test", { timestamp: nowSeconds + 59 })
        assert.strictEqual(cached.json.data.clients.length, 2)
        assert.strictEqual(upstream.seen.length, 1)
        yield* TestClock.adjust("2 seconds")
        const fresh = yield* matched(baseUrl, "email=eng@experts.test", { timestamp: nowSeconds + 61 })
        assert.deepStrictEqual(fresh.json.data.clients, [])
        assert.strictEqual(upstream.seen.length, 2)
      })
    )
  )

  it.effect("answers an empty list when the roster is unconfigured, unreachable, refusing or malformed", () =>
    run(
      Effect.gen(function* () {
        const malformed = yield* rosterStandIn(() => ({ status: 200, json: { clients: rosterAnswer.data.clients } }))
        const notJson = yield* rosterStandIn(() => ({ status: 200, text: "<html>maintenance</html>" }))
        const failing = yield* rosterStandIn(() => ({ status: 503, json: rosterAnswer }))
        const dropping = yield* rosterStandIn(() => "drop")
        const wrongKey = ExpertRosterCached().pipe(
          Layer.provide(ExpertRosterHttp({ url: `${failing.url}/roster`, key: Redacted.make("not-the-roster-key") }))
        )
        const rosters = [
          ExpertRosterUnconfigured,
          rosterOver(yield* unreachableUrl),
          rosterOver(malformed.url),
          rosterOver(notJson.url),
          rosterOver(failing.url),
          rosterOver(dropping.url),
          wrongKey
        ]
        for (const [index, upstream] of rosters.entries()) {
          const { baseUrl } = yield* serveServiceData({ roster: upstream })
          const answer = yield* matched(baseUrl, "email=eng@experts.test")
          assert.strictEqual(answer.status, 200, String(index))
          assert.deepStrictEqual(answer.json, { data: { clients: [] } }, String(index))
        }
      })
    )
  )

  it.effect("answers 400 for a missing or malformed email", () =>
    run(
      Effect.gen(function* () {
        const { baseUrl } = yield* serveServiceData()
        for (const query of ["", "email=", "email=not-an-address", `email=${"a".repeat(250)}@x.test`]) {
          const answer = yield* matched(baseUrl, query)
          assert.strictEqual(answer.status, 400, query)
          assert.strictEqual(answer.json.error.code, "VALIDATION_ERROR")
        }
      })
    )
  )
})

describe("POST /api/v1/service-data/short-link", () => {
  it.effect("answers the hub's own short link, the same for the same address, and the link redirects", () =>
    run(
      Effect.gen(function* () {
        const { baseUrl } = yield* serveServiceData()
        const slug = "Rec_0123456789-abcdef"
        const answer = yield* shortLink(baseUrl, { kind: "recording", slug })
        assert.strictEqual(answer.status, 200)
        assert.isTrue(answer.json.data.shortened)
        const url = answer.json.data.url as string
        assert.match(url, /^https:\/\/hub\.example\.test\/s\/[A-Za-z0-9_-]{11}$/)
        assert.strictEqual((yield* shortLink(baseUrl, { kind: "recording", slug })).json.data.url, url)
        const other = yield* shortLink(baseUrl, { kind: "recording", slug: "another-recording-slug" })
        assert.notStrictEqual(other.json.data.url, url)

        const code = url.slice(url.lastIndexOf("/") + 1)
        const followed = yield* Effect.promise(() => fetch(`${baseUrl}/s/${code}`, { redirect: "manual" }))
        assert.strictEqual(followed.status, 302)
        assert.strictEqual(followed.headers.get("location"), `${publicUrl}/recordings/${slug}`)
        assert.strictEqual((yield* request(`${baseUrl}/s/nothing-here`)).status, 404)
      })
    )
  )

  it.effect("never fails for a cosmetic reason: shortening off answers 200 with the long address", () =>
    run(
      Effect.gen(function* () {
        const { baseUrl } = yield* serveServiceData({ shortener: ShortenerOff })
        const answer = yield* shortLink(baseUrl, { kind: "recording", slug: "Rec_0123456789-abcdef" })
        assert.strictEqual(answer.status, 200)
        assert.deepStrictEqual(answer.json, {
          data: { url: `${publicUrl}/recordings/Rec_0123456789-abcdef`, shortened: false }
        })
      })
    )
  )

  it.effect("answers 400 for a kind outside the set or a slug that is not an address", () =>
    run(
      Effect.gen(function* () {
        const { baseUrl } = yield* serveServiceData()
        for (const body of [
          { kind: "page", slug: "Rec_0123456789-abcdef" },
          { kind: "recording", slug: "short" },
          { kind: "recording", slug: "../../admin?token=abcdefgh" },
          { kind: "recording" }
        ]) {
          const answer = yield* shortLink(baseUrl, body)
          assert.strictEqual(answer.status, 400, JSON.stringify(body))
          assert.strictEqual(answer.json.error.code, "VALIDATION_ERROR")
        }
      })
    )
  )
})
