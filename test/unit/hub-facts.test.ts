import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer, Result } from "effect"
import { FactOutboxMemory } from "../../adapters/memory/hub/FactOutboxMemory.ts"
import { DirectoryMemory } from "../../adapters/memory/hub/DirectoryMemory.ts"
import { ServiceStoreMemory } from "../../adapters/memory/hub/ServiceStoreMemory.ts"
import { verify } from "../../core/auth/Signature.ts"
import { seal } from "../../core/auth/SecretBox.ts"
import { HubEventPublisher } from "../../core/events/HubEventPublisher.ts"
import type { ProducerEvent } from "../../core/events/ProducerOutbox.ts"
import { relayOutcome } from "../../core/events/ProducerRelay.ts"
import { declaredFacts } from "../../core/hub/Conformance.ts"
import type { MemberOfOrg, Membership, Organization } from "../../core/hub/Directory.ts"
import { organizationFacts, type ChangedMember } from "../../core/hub/FactFanOut.ts"
import { FactOutbox, FactPublisher, factRetryPolicy, HubFacts } from "../../core/hub/HubFacts.ts"
import { Identity } from "../../core/hub/Identity.ts"
import { Registry } from "../../core/hub/Registry.ts"
import type { ProbeRequest } from "../../core/hub/ServiceProbe.ts"
import { ServiceStore, type RegisteredService, type ServiceStatus } from "../../core/hub/ServiceStore.ts"
import { ServiceCalls } from "../../core/hub/Workspace.ts"
import { IdGeneratorUlid } from "../../core/kernel/Ids.ts"

const changedAt = "2030-03-17T17:35:23.000Z"

const org = (id: string, fields: Partial<Organization> = {}): Organization => ({
  id,
  name: id,
  tier: "free",
  createdAt: "2030-01-01T00:00:00.000Z",
  archivedAt: null,
  mergedIntoOrgId: null,
  deletedAt: null,
  ...fields
})

const membership = (orgId: string, createdAt: string): Membership => ({
  orgId,
  userId: "u",
  role: "MEMBER",
  department: null,
  departmentRole: null,
  departments: [],
  roles: [],
  createdAt
})

const service = (
  id: string,
  consumesFacts: ReadonlyArray<string>,
  status: ServiceStatus = "live"
): RegisteredService => ({
  id,
  displayName: id,
  baseUrl: `https://${id}.example`,
  status,
  apiKeyHeader: "X-Workspace-Api-Key",
  resourcePath: "/api/v1/summary",
  firstParty: false,
  consumesFacts,
  createdAt: changedAt,
  updatedAt: changedAt,
  version: 1,
  conformance: null
})

const both = ["organization.status.changed", "subject.tier.changed"]
const services = [
  service("decisions", ["organization.status.changed"]),
  service("billing", both),
  service("drafty", both, "draft"),
  service("quiet", [])
]

const acme = org("org_acme", { tier: "monthly" })
const older = org("org_older", { tier: "hourly" })
const memberOf = (email: string, ...orgs: ReadonlyArray<Organization>): ChangedMember => ({
  email,
  memberships: orgs.map((o, i): MemberOfOrg => ({
    org: o,
    membership: membership(o.id, `2030-01-0${i + 1}T00:00:00Z`)
  }))
})
// Ada's first organization is Acme; Bob was in an older one first.
const members = [memberOf("ada@acme.test", acme), memberOf("bob@acme.test", older, acme)]

const summary = (facts: ReturnType<typeof organizationFacts>) =>
  facts.map(({ service, fact }) => `${service} ${fact.fact} ${fact.subject.email} ${JSON.stringify(fact.data)}`)

describe("the facts an organization's change implies", () => {
  it("tells each member's status to every live service that declares it, and nothing to the others", () => {
    const archived = { ...acme, archivedAt: changedAt }
    const facts = organizationFacts({ before: acme, after: archived, members, services, changedAt })
    const status = `{"organizationId":"org_acme","status":"archived","changedAt":"${changedAt}"}`
    assert.deepStrictEqual(summary(facts.filter((f) => f.fact.fact === "organization.status.changed")), [
      `decisions organization.status.changed ada@acme.test ${status}`,
      `decisions organization.status.changed bob@acme.test ${status}`,
      `billing organization.status.changed ada@acme.test ${status}`,
      `billing organization.status.changed bob@acme.test ${status}`
    ])
    assert.deepStrictEqual(facts[0]!.fact.subject, { email: "ada@acme.test", companyId: "org_acme" })
    // Archived, Acme is no longer Ada's first organization: she is on the free tier now, with none.
    assert.deepStrictEqual(summary(facts.filter((f) => f.fact.fact === "subject.tier.changed")), [
      `billing subject.tier.changed ada@acme.test {"organizationId":null,"tier":"free","changedAt":"${changedAt}"}`
    ])
  })

  it("tells a tier change only to the members whose first organization it is", () => {
    const facts = organizationFacts({ before: acme, after: { ...acme, tier: "hourly" }, members, services, changedAt })
    assert.deepStrictEqual(summary(facts), [
      `billing subject.tier.changed ada@acme.test {"organizationId":"org_acme","tier":"hourly","changedAt":"${changedAt}"}`
    ])
    assert.deepStrictEqual(facts[0]!.fact.subject, { email: "ada@acme.test", companyId: "org_acme" })
  })

  it("tells nothing when nothing a fact describes changed, or nobody consumes it", () => {
    assert.deepStrictEqual(
      organizationFacts({ before: acme, after: { ...acme, name: "Acme Inc" }, members, services, changedAt }),
      []
    )
    const merged = { ...acme, mergedIntoOrgId: "org_other" }
    assert.deepStrictEqual(
      organizationFacts({ before: acme, after: merged, members, services: [services[3]!], changedAt }),
      []
    )
    // Archived and then merged: still suspended, no new status to tell.
    const archived = { ...acme, archivedAt: changedAt }
    assert.deepStrictEqual(
      organizationFacts({
        before: { ...archived, mergedIntoOrgId: "x" },
        after: { ...archived, mergedIntoOrgId: "x" },
        members,
        services,
        changedAt
      }),
      []
    )
  })
})

describe("the retries of a fact", () => {
  const policy = factRetryPolicy([1, 5])
  const at = (attemptsBefore: number, status: number) =>
    relayOutcome(Result.succeed({ status }), { attemptsBefore, nowMs: 0, jitter: 0 }, policy, "The service")

  it("waits the schedule's steps, then its last one again and again: a fact is never given up for an outage", () => {
    assert.deepStrictEqual(at(0, 503), {
      _tag: "Retry",
      nextAttemptAt: "1970-01-01T00:00:01.000Z",
      error: "The service answered 503.",
      statusCode: 503
    })
    for (const attempts of [1, 2, 50]) {
      const outcome = at(attempts, 500)
      assert.strictEqual(outcome._tag === "Retry" ? outcome.nextAttemptAt : outcome._tag, "1970-01-01T00:00:05.000Z")
    }
    const offline = relayOutcome(
      Result.fail({
        _tag: "HubPublishFailed",
        reason: "network",
        message: "The service could not be reached."
      } as never),
      { attemptsBefore: 9, nowMs: 0, jitter: 0 },
      policy
    )
    assert.strictEqual(offline._tag, "Retry")
  })

  it("is done at a 2xx and refused for good at a 4xx other than 408 and 429", () => {
    assert.strictEqual(at(0, 202)._tag, "Delivered")
    assert.deepInclude(at(0, 400), { _tag: "Failed", error: "The service answered 400." })
    assert.strictEqual(at(0, 401)._tag, "Failed")
    assert.strictEqual(at(0, 429)._tag, "Retry")
    assert.strictEqual(at(0, 408)._tag, "Retry")
  })
})

describe("the facts a manifest declares", () => {
  const answer = (data: unknown, status = 200) => ({
    status,
    headers: {},
    body: JSON.stringify({ data }),
    truncated: false
  })
  const manifest = {
    service: "billing",
    displayName: "Billing",
    contractVersion: "v1",
    requiredTier: "free"
  }

  it("reads consumesFacts, or a self-serve manifest's requested facts, keeping only the platform's facts", () => {
    assert.deepStrictEqual(
      declaredFacts("billing", answer({ ...manifest, consumesFacts: ["subject.tier.changed", "weather.changed"] })),
      ["subject.tier.changed"]
    )
    const selfServe = {
      service: "billing",
      displayName: "Billing",
      contractVersion: "v1",
      capabilities: {},
      requestedGrants: { facts: ["organization.status.changed"] },
      certification: { resourcePath: "/r", healthPath: "/h" }
    }
    assert.deepStrictEqual(declaredFacts("billing", answer(selfServe)), ["organization.status.changed"])
  })

  it("reads none from a manifest that is refused, of another service, or missing", () => {
    const named = { ...manifest, consumesFacts: both }
    assert.deepStrictEqual(declaredFacts("other", answer(named)), [])
    assert.deepStrictEqual(declaredFacts("billing", answer(named, 401)), [])
    assert.deepStrictEqual(declaredFacts("billing", answer({ consumesFacts: both })), [])
  })
})

const secretsKey = "test-hub-secrets-key-0123456789abcdef"

const hubLayer = (sent: Array<ProbeRequest>, status: number) => {
  const calls = Layer.succeed(ServiceCalls)({
    send: (request) =>
      Effect.sync(() => {
        sent.push(request)
        return { status, headers: {}, body: "", truncated: false }
      })
  })
  return Layer.mergeAll(Identity.layer.pipe(Layer.provide(HubFacts.layer)), FactPublisher).pipe(
    Layer.provideMerge(Registry.layer({ secretsKey, allowLoopbackHttp: true })),
    Layer.provideMerge(Layer.mergeAll(DirectoryMemory, ServiceStoreMemory, FactOutboxMemory, IdGeneratorUlid, calls))
  )
}

/** A live service that declares `consumesFacts`, with its signing key. */
const liveService = (id: string, consumesFacts: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const store = yield* ServiceStore
    const signingKey = `hsg_${id}-signing-key-0123456789`
    yield* store.create({
      service: service(id, consumesFacts),
      credentials: {
        apiKey: seal(secretsKey, "hsk_key"),
        signingKey: seal(secretsKey, signingKey),
        embedKey: seal(secretsKey, "hek_key")
      }
    })
    return signingKey
  })

const sent: Array<ProbeRequest> = []

/** Marks every pending fact sent, so a test sees only the facts it causes. */
const drain = Effect.gen(function* () {
  const outbox = yield* FactOutbox
  for (const entry of yield* outbox.claimDue("2100-01-01T00:00:00Z", "2100-01-01T00:05:00Z", 100)) {
    yield* outbox.record(entry.event.id, { _tag: "Delivered", at: "2100-01-01T00:00:00Z", statusCode: 202 })
  }
})

layer(hubLayer(sent, 202))("the hub's facts, enqueued with the change and sent signed", (it) => {
  it.effect("archiving an organization enqueues a fact per member for the services that declare it", () =>
    Effect.gen(function* () {
      const identity = yield* Identity
      const outbox = yield* FactOutbox
      const publisher = yield* HubEventPublisher
      const signingKey = yield* liveService("ledger", ["organization.status.changed"])
      yield* liveService("other", ["subject.tier.changed"])
      const org = yield* identity.createOrg({ name: "Acme", tier: "monthly" })
      for (const email of ["ada@acme.test", "bob@acme.test"]) {
        yield* identity.createUser({ email, name: null })
        yield* identity.addMember(org.id, { email, role: "MEMBER" })
      }
      // Joining their first organization moved each to its tier.
      const joined = yield* outbox.pending(10)
      assert.deepStrictEqual(
        joined.map((row) => [row.service, row.type, row.subject.email, row.subject.companyId, row.data]),
        ["ada@acme.test", "bob@acme.test"].map((email) => [
          "other",
          "subject.tier.changed",
          email,
          org.id,
          { organizationId: org.id, tier: "monthly", changedAt: joined[0]!.occurredAt }
        ])
      )
      yield* drain
      // Setting the tier it has changes nothing, and tells nothing.
      yield* identity.updateOrg(org.id, { tier: "monthly" })
      assert.deepStrictEqual(yield* outbox.pending(10), [])

      yield* identity.updateOrg(org.id, { archived: true })
      const pending = yield* outbox.pending(10)
      assert.deepStrictEqual(
        pending.map((row) => [row.service, row.type, row.subject.email, (row.data as { status: string }).status]),
        [
          ["ledger", "organization.status.changed", "ada@acme.test", "archived"],
          ["ledger", "organization.status.changed", "bob@acme.test", "archived"],
          ["other", "subject.tier.changed", "ada@acme.test", undefined],
          ["other", "subject.tier.changed", "bob@acme.test", undefined]
        ]
      )

      // Sent to the service's facts route: the fact itself, signed with its signing key over the exact bytes.
      const answer = yield* publisher.publish(pending[0]!)
      assert.strictEqual(answer.status, 202)
      const request = sent.at(-1)!
      assert.strictEqual(request.url, "https://ledger.example/api/v1/facts")
      assert.strictEqual(request.method, "POST")
      assert.deepStrictEqual(JSON.parse(request.body!), {
        fact: "organization.status.changed",
        subject: { email: "ada@acme.test", companyId: org.id },
        data: pending[0]!.data
      })
      assert.isTrue(
        verify({
          secret: signingKey,
          timestamp: request.headers["x-platform-timestamp"],
          signature: request.headers["x-platform-signature"],
          payload: request.body!,
          nowSeconds: Number(request.headers["x-platform-timestamp"])
        })
      )
      yield* drain
    })
  )

  it.effect("leaving or joining an organization tells the person's new tier to the services that declare it", () =>
    Effect.gen(function* () {
      const identity = yield* Identity
      const outbox = yield* FactOutbox
      const first = yield* identity.createOrg({ name: "First", tier: "hourly" })
      const second = yield* identity.createOrg({ name: "Second", tier: "monthly" })
      yield* identity.createUser({ email: "dee@first.test", name: null })
      yield* identity.addMember(first.id, { email: "dee@first.test", role: "MEMBER" })
      yield* identity.addMember(second.id, { email: "dee@first.test", role: "MEMBER" })
      const tiers = Effect.map(outbox.pending(50), (rows) =>
        rows
          .filter((row) => row.subject.email === "dee@first.test")
          .map((row) => [row.service, (row.data as { tier: string }).tier, row.subject.companyId])
      )
      // The second membership changes nothing: the first organization still gives the tier.
      assert.deepStrictEqual(yield* tiers, [["other", "hourly", first.id]])
      yield* drain
      yield* identity.removeMember(first.id, "dee@first.test")
      assert.deepStrictEqual(yield* tiers, [["other", "monthly", second.id]])
      yield* drain
      yield* identity.removeMember(second.id, "dee@first.test")
      assert.deepStrictEqual(yield* tiers, [["other", "free", undefined]])
      yield* drain
    })
  )

  it.effect("a deleted organization's former members are told; a service no longer live is never sent to", () =>
    Effect.gen(function* () {
      const identity = yield* Identity
      const outbox = yield* FactOutbox
      const publisher = yield* HubEventPublisher
      const registry = yield* Registry
      yield* liveService("deletes", ["organization.status.changed"])
      const org = yield* identity.createOrg({ name: "Gone" })
      yield* identity.createUser({ email: "cy@gone.test", name: null })
      yield* identity.addMember(org.id, { email: "cy@gone.test", role: "OWNER" })
      yield* identity.updateOrg(org.id, { deleted: true })
      const pending = (yield* outbox.pending(50)).filter((row) => row.service === "deletes")
      assert.deepStrictEqual(
        pending.map((row) => [row.subject.email, (row.data as { status: string }).status]),
        [["cy@gone.test", "deleted"]]
      )
      const before = sent.length
      yield* registry.suspend("deletes")
      assert.strictEqual((yield* publisher.publish(pending[0]! as ProducerEvent)).status, 404)
      assert.strictEqual(sent.length, before, "nothing goes to a suspended service")
    })
  )
})
