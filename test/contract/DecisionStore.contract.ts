import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { randomUUID } from "node:crypto"
import { monotonicFactory } from "ulid"
import type { Decision, DecisionStatus } from "../../core/decisions/Decision.ts"
import { DecisionStore, type DecisionQuery, type DecisionScope } from "../../core/decisions/DecisionStore.ts"
import { planLadder } from "../../core/decisions/Escalation.ts"

// The suite shares one store: every test works in organizations of its own. `due` looks across organizations,
// so its test lives in 2001 and every other decision expires in 2029 or later.
const now = "2030-01-01T00:00:00.000Z"
const before = (minutes: number) => new Date(Date.parse(now) - minutes * 60_000).toISOString()
const after = (minutes: number) => new Date(Date.parse(now) + minutes * 60_000).toISOString()

const nextId = monotonicFactory()
const freshOrganization = () => `org_${randomUUID()}`

/** A minimal stored decision: every optional field absent. Ids are ULIDs, newer for each call. */
const decisionIn = (organizationId: string, fields: Partial<Decision> = {}): Decision => ({
  id: nextId(),
  organizationId,
  callerName: "billing-agent",
  roleSlug: "finance",
  status: "pending",
  title: "Refund order 1234?",
  facts: [],
  links: [],
  options: [
    { id: "opt_yes", label: "Refund" },
    { id: "opt_no", label: "Keep" }
  ],
  urgency: "normal",
  infoRequests: [],
  assignmentHistory: [],
  createdAt: before(60),
  updatedAt: before(60),
  version: 0,
  ...fields
})

/** Every optional field present, with text that JSON and SQL must keep intact. */
const fullDecisionIn = (organizationId: string): Decision =>
  decisionIn(organizationId, {
    status: "resolved",
    title: `Zoë's "quoted" ✓ title; DROP TABLE decisions; --`,
    body: "# Heading\n\nLine two with a backslash \\ and emoji 🚀",
    facts: [{ label: "Amount", value: "€1,200.50" }],
    links: [{ label: "Order", url: "https://shop.example.com/orders/1234?x=1&y=2" }],
    options: [
      { id: "opt_yes", label: "Refund", description: "Full refund", consequence: "Money leaves", default: true },
      { id: "opt_no", label: "Keep", default: false }
    ],
    urgency: "urgent",
    expiresAt: after(90),
    defaultOptionId: "opt_yes",
    directAssigneeEmail: "ada@example.com",
    resolution: {
      kind: "chosen",
      optionId: "opt_yes",
      rationale: "Loyal customer",
      decidedBy: "ada@example.com",
      decidedAt: before(5),
      votes: [
        { by: "ada@example.com", kind: "chosen", optionId: "opt_yes", rationale: "Loyal customer", at: before(5) }
      ]
    },
    quorum: {
      count: 1,
      votes: [
        { by: "ada@example.com", kind: "chosen", optionId: "opt_yes", rationale: "Loyal customer", at: before(5) }
      ]
    },
    infoRequests: [
      {
        id: "ir_1",
        question: "Which card?",
        askedBy: "ada@example.com",
        askedAt: before(30),
        answer: "Visa",
        answeredAt: before(20)
      },
      { id: "ir_2", question: "Anything else?", askedBy: "ada@example.com", askedAt: before(10) }
    ],
    assignmentHistory: [
      { actor: "admin@example.com", at: before(40), fromRole: "support", toRole: "finance", note: "Money matters" },
      { actor: "admin@example.com", at: before(35), fromRole: "finance", toEmail: "ada@example.com" }
    ],
    updatedAt: before(5),
    version: 4
  })

const ids = (decisions: ReadonlyArray<Decision>) => decisions.map((d) => d.id)
const newestFirst = (decisions: ReadonlyArray<Decision>) => ids(decisions).reverse()

const query = (organizationId: string, scope: DecisionScope, rest: Partial<DecisionQuery> = {}): DecisionQuery => ({
  organizationId,
  scope,
  nowIso: now,
  limit: 100,
  ...rest
})

const all: DecisionScope = { _tag: "All" }

/** The DecisionStore port's contract (core/decisions/DecisionStore.ts), run once per adapter. */
export const DecisionStoreContract = (name: string, store: Layer.Layer<DecisionStore, unknown>) =>
  describe(`DecisionStore contract (${name})`, () =>
    layer(store, { excludeTestServices: true })((it) => {
      it.effect("get answers the inserted decision whole, optional fields present or absent as inserted", () =>
        Effect.gen(function* () {
          const store = yield* DecisionStore
          const org = freshOrganization()
          const full = fullDecisionIn(org)
          const minimal = decisionIn(org)
          yield* store.insert(full)
          yield* store.insert(minimal)
          assert.deepStrictEqual(yield* store.get(org, full.id), full)
          const got = yield* store.get(org, minimal.id)
          assert.deepStrictEqual(got, minimal)
          assert.deepStrictEqual(Object.keys(got!).sort(), Object.keys(minimal).sort())
          assert.deepStrictEqual(Object.keys(got!.options[0]!).sort(), ["id", "label"])
        })
      )

      it.effect("get of another organization's decision, or of an unknown id, answers undefined", () =>
        Effect.gen(function* () {
          const store = yield* DecisionStore
          const [org, other] = [freshOrganization(), freshOrganization()]
          const decision = decisionIn(org)
          yield* store.insert(decision)
          assert.isUndefined(yield* store.get(other, decision.id))
          assert.isUndefined(yield* store.get(org, nextId()))
          assert.strictEqual((yield* store.get(org, decision.id))?.id, decision.id)
        })
      )

      it.effect("save writes when the stored version is the expected one, and answers false when stale", () =>
        Effect.gen(function* () {
          const store = yield* DecisionStore
          const org = freshOrganization()
          const decision = decisionIn(org, { expiresAt: after(30) })
          yield* store.insert(decision)
          const { expiresAt: _dropped, ...withoutExpiry } = decision
          const next: Decision = {
            ...withoutExpiry,
            status: "needs_info",
            roleSlug: "legal",
            directAssigneeEmail: "bob@example.com",
            updatedAt: before(1),
            version: 1
          }
          assert.isTrue(yield* store.save(next, 0))
          assert.deepStrictEqual(yield* store.get(org, decision.id), next)

          const stale: Decision = { ...next, title: "stale", version: 1 }
          assert.isFalse(yield* store.save(stale, 0))
          assert.deepStrictEqual(yield* store.get(org, decision.id), next)

          const later: Decision = { ...next, status: "resolved", version: 2 }
          assert.isTrue(yield* store.save(later, 1))
          assert.deepStrictEqual(yield* store.get(org, decision.id), later)
        })
      )

      it.effect("save of another organization's decision, or of an unknown one, answers false", () =>
        Effect.gen(function* () {
          const store = yield* DecisionStore
          const [org, other] = [freshOrganization(), freshOrganization()]
          const decision = decisionIn(org)
          yield* store.insert(decision)
          assert.isFalse(yield* store.save({ ...decision, organizationId: other, title: "hijacked", version: 1 }, 0))
          assert.isFalse(yield* store.save({ ...decisionIn(org), version: 1 }, 0))
          assert.deepStrictEqual(yield* store.get(org, decision.id), decision)
          assert.isUndefined(yield* store.get(other, decision.id))
        })
      )

      it.effect("of concurrent saves from the same version exactly one applies", () =>
        Effect.gen(function* () {
          const store = yield* DecisionStore
          const org = freshOrganization()
          const decision = decisionIn(org)
          yield* store.insert(decision)
          const attempts = Array.from({ length: 12 }, (_, i) => ({ ...decision, title: `move ${i}`, version: 1 }))
          const saved = yield* Effect.forEach(attempts, (next) => store.save(next, 0), { concurrency: "unbounded" })
          assert.strictEqual(saved.filter(Boolean).length, 1)
          const winner = attempts[saved.indexOf(true)]!
          assert.deepStrictEqual(yield* store.get(org, decision.id), winner)
        })
      )

      it.effect("list answers one organization's decisions newest first, at most `limit`", () =>
        Effect.gen(function* () {
          const store = yield* DecisionStore
          const [org, other] = [freshOrganization(), freshOrganization()]
          const mine = [decisionIn(org), decisionIn(org), decisionIn(org), decisionIn(org)]
          // Inserted out of order: the order comes from the ids, not from the insertion.
          for (const d of [mine[2]!, mine[0]!, decisionIn(other), mine[3]!, mine[1]!]) yield* store.insert(d)
          assert.deepStrictEqual(ids(yield* store.list(query(org, all))), newestFirst(mine))
          assert.deepStrictEqual(ids(yield* store.list(query(org, all, { limit: 2 }))), newestFirst(mine).slice(0, 2))
          assert.deepStrictEqual(yield* store.list(query(freshOrganization(), all)), [])
          assert.deepStrictEqual(yield* store.list(query(org, all, { limit: 0 })), [])
        })
      )

      it.effect("list pages by afterId without gaps or duplicates", () =>
        Effect.gen(function* () {
          const store = yield* DecisionStore
          const org = freshOrganization()
          const inserted = Array.from({ length: 7 }, () => decisionIn(org))
          for (const d of inserted) yield* store.insert(d)
          const pages: Array<ReadonlyArray<string>> = []
          let afterId: string | undefined = undefined
          while (true) {
            const page: ReadonlyArray<Decision> = yield* store.list(query(org, all, { limit: 3, afterId }))
            if (page.length === 0) break
            pages.push(ids(page))
            afterId = page[page.length - 1]!.id
          }
          assert.deepStrictEqual(
            pages.map((p) => p.length),
            [3, 3, 1]
          )
          assert.deepStrictEqual(pages.flat(), newestFirst(inserted))
          // A cursor need not be a listed id: the page starts strictly below it.
          const middle = inserted[3]!.id
          assert.deepStrictEqual(
            ids(yield* store.list(query(org, all, { afterId: middle }))),
            newestFirst(inserted.slice(0, 3))
          )
        })
      )

      it.effect("list Inbox answers decisions routed to a role the user holds or assigned to them directly", () =>
        Effect.gen(function* () {
          const store = yield* DecisionStore
          const org = freshOrganization()
          const finance = decisionIn(org, { roleSlug: "finance" })
          const legal = decisionIn(org, { roleSlug: "legal" })
          const assignedToAda = decisionIn(org, { roleSlug: "support", directAssigneeEmail: "ada@example.com" })
          const assignedToBob = decisionIn(org, { roleSlug: "support", directAssigneeEmail: "bob@example.com" })
          const resolvedFinance = decisionIn(org, { roleSlug: "finance", status: "resolved" })
          const elsewhere = decisionIn(freshOrganization(), { roleSlug: "finance" })
          for (const d of [finance, legal, assignedToAda, assignedToBob, resolvedFinance, elsewhere]) {
            yield* store.insert(d)
          }
          const inbox = (email: string, roleSlugs: ReadonlyArray<string>) =>
            Effect.map(store.list(query(org, { _tag: "Inbox", email, roleSlugs })), ids)
          assert.deepStrictEqual(
            yield* inbox("ada@example.com", ["finance"]),
            newestFirst([finance, assignedToAda, resolvedFinance])
          )
          assert.deepStrictEqual(
            yield* inbox("carol@example.com", ["legal", "finance"]),
            newestFirst([finance, legal, resolvedFinance])
          )
          assert.deepStrictEqual(yield* inbox("bob@example.com", []), [assignedToBob.id])
          // Emails are compared as the core compares them: trimmed and case-insensitively.
          assert.deepStrictEqual(yield* inbox(" Ada@Example.COM ", []), [assignedToAda.id])
          assert.deepStrictEqual(yield* inbox("nobody@example.com", []), [])
        })
      )

      it.effect("list Unrouted answers open decisions with no direct assignee and a role nobody can act in", () =>
        Effect.gen(function* () {
          const store = yield* DecisionStore
          const org = freshOrganization()
          const orphan = decisionIn(org, { roleSlug: "legal" })
          const orphanNeedsInfo = decisionIn(org, { roleSlug: "archived-role", status: "needs_info" })
          const orphanExpiringLater = decisionIn(org, { roleSlug: "legal", expiresAt: after(1) })
          const routed = decisionIn(org, { roleSlug: "finance" })
          const assigned = decisionIn(org, { roleSlug: "legal", directAssigneeEmail: "ada@example.com" })
          const resolved = decisionIn(org, { roleSlug: "legal", status: "resolved" })
          const cancelled = decisionIn(org, { roleSlug: "legal", status: "cancelled" })
          const pastExpiry = decisionIn(org, { roleSlug: "legal", expiresAt: before(1) })
          for (const d of [
            orphan,
            orphanNeedsInfo,
            orphanExpiringLater,
            routed,
            assigned,
            resolved,
            cancelled,
            pastExpiry
          ]) {
            yield* store.insert(d)
          }
          const unrouted = (routableRoleSlugs: ReadonlyArray<string>) =>
            Effect.map(store.list(query(org, { _tag: "Unrouted", routableRoleSlugs })), ids)
          assert.deepStrictEqual(
            yield* unrouted(["finance"]),
            newestFirst([orphan, orphanNeedsInfo, orphanExpiringLater])
          )
          assert.deepStrictEqual(
            yield* unrouted([]),
            newestFirst([orphan, orphanNeedsInfo, orphanExpiringLater, routed])
          )
          assert.deepStrictEqual(yield* unrouted(["finance", "legal", "archived-role"]), [])
        })
      )

      it.effect(
        "the status filter sees statuses as a reader does at nowIso: an open decision past expiry is expired",
        () =>
          Effect.gen(function* () {
            const store = yield* DecisionStore
            const org = freshOrganization()
            const pending = decisionIn(org, { expiresAt: after(1) })
            const pendingNoExpiry = decisionIn(org)
            const pendingPast = decisionIn(org, { expiresAt: before(1) })
            const pendingAtNow = decisionIn(org, { expiresAt: now })
            const needsInfoPast = decisionIn(org, { status: "needs_info", expiresAt: before(1) })
            const needsInfo = decisionIn(org, { status: "needs_info", expiresAt: after(1) })
            const expired = decisionIn(org, { status: "expired", expiresAt: before(10) })
            const resolvedPast = decisionIn(org, { status: "resolved", expiresAt: before(1) })
            const cancelled = decisionIn(org, { status: "cancelled" })
            const everything = [
              pending,
              pendingNoExpiry,
              pendingPast,
              pendingAtNow,
              needsInfoPast,
              needsInfo,
              expired,
              resolvedPast,
              cancelled
            ]
            for (const d of everything) yield* store.insert(d)
            const withStatuses = (statuses: ReadonlyArray<DecisionStatus>, rest: Partial<DecisionQuery> = {}) =>
              Effect.map(store.list(query(org, all, { statuses, ...rest })), ids)

            assert.deepStrictEqual(yield* withStatuses(["pending"]), newestFirst([pending, pendingNoExpiry]))
            assert.deepStrictEqual(
              yield* withStatuses(["expired"]),
              newestFirst([pendingPast, pendingAtNow, needsInfoPast, expired])
            )
            assert.deepStrictEqual(yield* withStatuses(["needs_info"]), [needsInfo.id])
            assert.deepStrictEqual(
              yield* withStatuses(["resolved", "cancelled"]),
              newestFirst([resolvedPast, cancelled])
            )
            assert.deepStrictEqual(yield* withStatuses([]), [])
            assert.deepStrictEqual(ids(yield* store.list(query(org, all))), newestFirst(everything))
            // An hour earlier, nothing open had expired yet.
            assert.deepStrictEqual(
              yield* withStatuses(["pending"], { nowIso: before(60) }),
              newestFirst([pending, pendingNoExpiry, pendingPast, pendingAtNow])
            )
            // The filter applies before the limit and the cursor, so a page is full when enough match.
            assert.deepStrictEqual(
              yield* withStatuses(["expired"], { limit: 2, afterId: needsInfoPast.id }),
              newestFirst([pendingPast, pendingAtNow])
            )
            // The stored decision is answered as stored: settling it is the reader's business.
            const [stored] = yield* store.list(
              query(org, all, { statuses: ["expired"], limit: 1, afterId: expired.id })
            )
            assert.deepStrictEqual(stored, needsInfoPast)
          })
      )

      it.effect("due answers open decisions past expiry in any organization, oldest expiry first, at most limit", () =>
        Effect.gen(function* () {
          const store = yield* DecisionStore
          const at = (minute: number) => `2001-01-01T00:${String(minute).padStart(2, "0")}:00.000Z`
          const [org, other] = [freshOrganization(), freshOrganization()]
          const third = decisionIn(org, { expiresAt: at(30) })
          const first = decisionIn(other, { status: "needs_info", expiresAt: at(10) })
          const second = decisionIn(org, { expiresAt: at(20) })
          const atNow = decisionIn(other, { expiresAt: at(40) })
          const notYet = decisionIn(org, { expiresAt: at(41) })
          const resolved = decisionIn(org, { status: "resolved", expiresAt: at(5) })
          const expired = decisionIn(other, { status: "expired", expiresAt: at(5) })
          const cancelled = decisionIn(org, { status: "cancelled", expiresAt: at(5) })
          for (const d of [third, first, second, atNow, notYet, resolved, expired, cancelled]) yield* store.insert(d)

          assert.deepStrictEqual(ids(yield* store.due(at(40), 10)), ids([first, second, third, atNow]))
          assert.deepStrictEqual(ids(yield* store.due(at(40), 2)), ids([first, second]))
          assert.deepStrictEqual(ids(yield* store.due(at(15), 10)), ids([first]))
          assert.deepStrictEqual(yield* store.due(at(9), 10), [])
          assert.deepStrictEqual((yield* store.due(at(10), 1))[0], first)

          // Once saved as expired, a decision is no longer due.
          assert.isTrue(yield* store.save({ ...first, status: "expired", version: 1 }, 0))
          assert.deepStrictEqual(ids(yield* store.due(at(40), 10)), ids([second, third, atNow]))
        })
      )

      // Its decisions live in 1990 (before every other test's) and none is left open with a past expiry.
      it.effect("claimEscalation answers the open decision whose next step is due first, before its expiry", () =>
        Effect.gen(function* () {
          const store = yield* DecisionStore
          const t = (seconds: number) => new Date(Date.UTC(1990, 0, 1) + seconds * 1000).toISOString()
          const created = Date.UTC(1990, 0, 1)
          const ladder = (...afters: ReadonlyArray<number>) =>
            planLadder(
              afters.map((after) => ({ after, action: "remind" as const })),
              created
            )
          const [org, other] = [freshOrganization(), freshOrganization()]
          const base = { createdAt: t(0), updatedAt: t(0) }
          const later = decisionIn(org, { ...base, escalation: ladder(60, 600) })
          const first = decisionIn(other, { ...base, status: "needs_info", escalation: ladder(30) })
          const allRan = decisionIn(org, {
            ...base,
            escalation: ladder(10).map((s) => ({ ...s, ranAt: t(11), outcome: "done" as const }))
          })
          const closed = decisionIn(org, { ...base, status: "resolved", escalation: ladder(10) })
          const expiring = decisionIn(other, { ...base, expiresAt: t(45), escalation: ladder(40) })
          const pastExpiry = decisionIn(org, { ...base, expiresAt: t(20), escalation: ladder(20) })
          for (const d of [later, first, allRan, closed, expiring, pastExpiry]) yield* store.insert(d)

          assert.isUndefined(yield* store.claimEscalation(t(29)))
          assert.strictEqual((yield* store.claimEscalation(t(30)))?.id, first.id)
          assert.strictEqual((yield* store.claimEscalation(t(60)))?.id, first.id)
          // Once its step is marked, it is due no more; the one whose expiry came first is never claimed.
          const ran = first.escalation!.map((s) => ({ ...s, ranAt: t(61), outcome: "done" as const }))
          assert.isTrue(yield* store.save({ ...first, escalation: ran, version: 1 }, 0))
          assert.strictEqual((yield* store.claimEscalation(t(42)))?.id, expiring.id)
          assert.strictEqual((yield* store.claimEscalation(t(60)))?.id, later.id)
          // The next step of a ladder counts: `later` is due again at 600 s once its first step ran.
          const [one, two] = later.escalation!
          const stepped = [{ ...one!, ranAt: t(61), outcome: "done" as const }, two!]
          assert.isTrue(yield* store.save({ ...later, escalation: stepped, version: 1 }, 0))
          assert.isUndefined(yield* store.claimEscalation(t(599)))
          assert.strictEqual((yield* store.claimEscalation(t(600)))?.id, later.id)

          for (const [d, version] of [
            [later, 1],
            [expiring, 0],
            [pastExpiry, 0]
          ] as const) {
            const current = (yield* store.get(d.organizationId, d.id))!
            assert.isTrue(yield* store.save({ ...current, status: "cancelled", version: version + 1 }, version))
          }
          assert.isUndefined(yield* store.claimEscalation(t(10_000)))
        })
      )
    }))
