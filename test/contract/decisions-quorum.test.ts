import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { CallerAuthentication } from "../../core/decisions/CallerAuthentication.ts"
import { Decisions, type CallerIdentity, type WorkspaceUser } from "../../core/decisions/Decisions.ts"
import { Templates } from "../../core/decisions/Templates.ts"
import { WebhookOutbox } from "../../core/decisions/WebhookOutbox.ts"
import { Webhooks } from "../../core/decisions/Webhooks.ts"
import { sqlBackends } from "../support/Databases.ts"
import { DecisionsMemory } from "../support/DecisionsMemory.ts"
import { decisionsSqlOn } from "../support/DecisionsSql.ts"

/**
 * Decisions with a quorum through the use cases, on the memory adapters and on the SQL ones (PGlite, and
 * Postgres when configured): votes, changed votes, declines, the check against the role's holders, templates'
 * defaults, and many people voting at the same moment (none of their votes lost, one resolution).
 */

type Stack = Layer.Layer<Decisions | CallerAuthentication | Templates | Webhooks | WebhookOutbox, unknown>

const backends: ReadonlyArray<{ readonly name: string; readonly stack: Stack }> = [
  { name: "memory", stack: DecisionsMemory },
  ...sqlBackends.map((backend) => ({ name: `sql on ${backend.name}`, stack: decisionsSqlOn(backend) as Stack }))
]

/** A fresh organization whose `ops` role has `holders` people (p0@…, p1@…), a caller key and a webhook. */
const organization = (holders: number) =>
  Effect.gen(function* () {
    const decisions = yield* Decisions
    const org = `org_${randomUUID().slice(0, 8)}`
    const admin: WorkspaceUser = { organizationId: org, email: `admin@${org}.example`, isAdmin: true }
    const people: Array<WorkspaceUser> = Array.from({ length: holders }, (_, i) => ({
      organizationId: org,
      email: `p${i}@${org}.example`,
      isAdmin: false
    }))
    yield* decisions.createRole(admin, { slug: "ops", name: "Ops" })
    for (const person of people) yield* decisions.assign(admin, "ops", person.email)
    const caller = (yield* (yield* CallerAuthentication).authenticate(
      (yield* decisions.createKey(admin, "agent")).plaintext
    )) as CallerIdentity
    yield* (yield* Webhooks).register(caller, "http://127.0.0.1:9/hook")
    const ask = (count: number) =>
      Effect.map(
        decisions.create(caller, {
          title: "Ship it?",
          roleSlug: "ops",
          options: [
            { id: "yes", label: "Yes" },
            { id: "no", label: "No" }
          ],
          quorum: { count }
        }),
        (view) => view.decision.id
      )
    return { decisions, admin, people, caller, ask, org }
  })

/** The webhook deliveries of one decision, by event type. */
const eventsOf = (org: string, decisionId: string) =>
  Effect.gen(function* () {
    const deliveries = yield* (yield* WebhookOutbox).list(org, { limit: 100 })
    return deliveries.filter((d) => d.decisionId === decisionId).map((d) => d.eventType)
  })

const slow = 120_000

for (const backend of backends) {
  describe(`decisions with a quorum (${backend.name})`, () =>
    layer(backend.stack, { excludeTestServices: true, timeout: slow })((it) => {
      it.effect(
        "a choice is a vote until M people agree; a vote may change; the M-th vote resolves with the votes",
        () =>
          Effect.gen(function* () {
            const { decisions, people, ask, org } = yield* organization(3)
            const [a, b, c] = people as [WorkspaceUser, WorkspaceUser, WorkspaceUser]
            const id = yield* ask(2)

            const first = (yield* decisions.choose(a, id, { optionId: "yes", rationale: "looks fine" })).decision
            assert.strictEqual(first.status, "pending")
            assert.deepStrictEqual(
              first.quorum?.votes.map((v) => [v.by, v.optionId]),
              [[a.email, "yes"]]
            )
            assert.deepStrictEqual(yield* eventsOf(org, id), [])

            // Ann changes her mind: still one vote of hers, now for "no".
            const changed = (yield* decisions.choose(a, id, { optionId: "no" })).decision
            assert.strictEqual(changed.status, "pending")
            assert.deepStrictEqual(
              changed.quorum?.votes.map((v) => [v.by, v.optionId]),
              [[a.email, "no"]]
            )
            // Bob votes yes: one each, still open.
            assert.strictEqual((yield* decisions.choose(b, id, { optionId: "yes" })).decision.status, "pending")
            // Carl votes no: two for no from different people.
            const resolved = (yield* decisions.choose(c, id, { optionId: "no", rationale: "too risky" })).decision
            assert.strictEqual(resolved.status, "resolved")
            assert.strictEqual(resolved.resolution?.kind, "chosen")
            assert.strictEqual(resolved.resolution?.optionId, "no")
            assert.strictEqual(resolved.resolution?.decidedBy, c.email)
            assert.strictEqual(resolved.resolution?.rationale, "too risky")
            assert.deepStrictEqual(
              resolved.resolution?.votes?.map((v) => v.by),
              [a.email, c.email]
            )
            assert.deepStrictEqual(yield* eventsOf(org, id), ["decision.resolved"])

            // Resolved: a late vote is refused.
            const late = yield* Effect.flip(decisions.choose(b, id, { optionId: "no" }))
            assert.strictEqual(late._tag, "InvalidTransition")
            const read = (yield* decisions.get(org, id)).decision
            assert.deepStrictEqual(read, resolved)
          })
      )

      it.effect("a decline needs M declines; a choice and a decline by one person are one vote", () =>
        Effect.gen(function* () {
          const { decisions, people, ask } = yield* organization(3)
          const [a, b] = people as [WorkspaceUser, WorkspaceUser]
          const id = yield* ask(2)
          yield* decisions.choose(a, id, { optionId: "yes" })
          const one = (yield* decisions.decline(a, id, { rationale: "no budget" })).decision
          assert.strictEqual(one.status, "pending")
          assert.deepStrictEqual(
            one.quorum?.votes.map((v) => [v.by, v.kind]),
            [[a.email, "declined"]]
          )
          const declined = (yield* decisions.decline(b, id, {})).decision
          assert.strictEqual(declined.status, "resolved")
          assert.strictEqual(declined.resolution?.kind, "declined")
          assert.isUndefined(declined.resolution?.optionId)
          assert.deepStrictEqual(
            declined.resolution?.votes?.map((v) => v.by),
            [a.email, b.email]
          )
        })
      )

      it.effect("a quorum above the people who may answer is a validation error naming quorum.count", () =>
        Effect.gen(function* () {
          const { decisions, caller, ask } = yield* organization(2)
          const refused = yield* Effect.flip(ask(3))
          assert.strictEqual(refused._tag, "ValidationError")
          assert.deepStrictEqual(refused._tag === "ValidationError" ? refused.details?.map((d) => d.field) : [], [
            "quorum.count"
          ])
          // The role's two holders can reach two; a direct assignee outside the role is a third person.
          yield* ask(2)
          const withAssignee = yield* decisions.create(caller, {
            title: "T",
            roleSlug: "ops",
            options: [{ label: "A" }, { label: "B" }],
            directAssigneeEmail: `zed@${caller.organizationId}.example`,
            quorum: { count: 3 }
          })
          assert.strictEqual(withAssignee.decision.quorum?.count, 3)
        })
      )

      it.effect("a template's quorum is the default of the decisions it raises", () =>
        Effect.gen(function* () {
          const { decisions, admin, people, caller } = yield* organization(2)
          const templates = yield* Templates
          yield* templates.create(admin, {
            slug: "ship",
            name: "Ship",
            roleSlug: "ops",
            titleTemplate: "Ship {{what}}?",
            options: [{ label: "Yes" }, { label: "No" }],
            quorum: { count: 2 }
          })
          const raised = (yield* templates.raise(caller, "ship", { what: "v2" })).decision
          assert.deepStrictEqual(raised.quorum, { count: 2, votes: [] })
          const yes = raised.options[0]!.id
          assert.strictEqual(
            (yield* decisions.choose(people[0]!, raised.id, { optionId: yes })).decision.status,
            "pending"
          )
          assert.strictEqual(
            (yield* decisions.choose(people[1]!, raised.id, { optionId: yes })).decision.status,
            "resolved"
          )
          // Cleared by an update: the next raise needs one person.
          yield* templates.update(admin, "ship", { quorum: null })
          assert.isUndefined((yield* templates.raise(caller, "ship", { what: "v3" })).decision.quorum)
        })
      )

      it.effect("many people voting at once: every vote recorded, the resolution once, with exactly M votes", () =>
        Effect.gen(function* () {
          const n = 12
          const { decisions, people, ask, org } = yield* organization(n)
          const all = (id: string, optionOf: (i: number) => "yes" | "no") =>
            Effect.all(
              people.map((person, i) => Effect.result(decisions.choose(person, id, { optionId: optionOf(i) }))),
              { concurrency: "unbounded" }
            )

          // Split six and six under a quorum of seven: nothing resolves and all twelve votes are there.
          const split = yield* ask(7)
          const splitResults = yield* all(split, (i) => (i % 2 === 0 ? "yes" : "no"))
          assert.isTrue(splitResults.every((r) => r._tag === "Success"))
          const afterSplit = (yield* decisions.get(org, split)).decision
          assert.strictEqual(afterSplit.status, "pending")
          assert.sameMembers(
            afterSplit.quorum!.votes.map((v) => v.by),
            people.map((p) => p.email)
          )

          // Everyone for yes under a quorum of five: five votes make the resolution, the others are refused.
          const race = yield* ask(5)
          const results = yield* all(race, () => "yes")
          const accepted = results.filter((r) => r._tag === "Success")
          const refused = results.filter((r) => r._tag === "Failure")
          assert.strictEqual(accepted.length, 5)
          assert.isTrue(refused.every((r) => r._tag === "Failure" && r.failure._tag === "InvalidTransition"))
          const final = (yield* decisions.get(org, race)).decision
          assert.strictEqual(final.status, "resolved")
          assert.strictEqual(final.resolution?.votes?.length, 5)
          assert.strictEqual(new Set(final.resolution?.votes?.map((v) => v.by)).size, 5)
          assert.deepStrictEqual(final.quorum?.votes, final.resolution?.votes)
          assert.deepStrictEqual(yield* eventsOf(org, race), ["decision.resolved"])

          // Everyone for yes under a quorum of all twelve: the last vote resolves, none is lost.
          const everyone = yield* ask(n)
          const allResults = yield* all(everyone, () => "yes")
          assert.isTrue(allResults.every((r) => r._tag === "Success"))
          const unanimous = (yield* decisions.get(org, everyone)).decision
          assert.strictEqual(unanimous.status, "resolved")
          assert.sameMembers(
            unanimous.resolution!.votes!.map((v) => v.by),
            people.map((p) => p.email)
          )
          assert.deepStrictEqual(yield* eventsOf(org, everyone), ["decision.resolved"])
        })
      )
    }))
}
