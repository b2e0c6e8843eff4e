import { assert, describe, it } from "@effect/vitest"
import type { Decision } from "../../core/decisions/Decision.ts"
import { decisionLink, notificationsFor } from "../../core/decisions/DecisionNotifications.ts"
import { stableUlid } from "../../core/events/StableId.ts"
import { isUlid } from "../../core/kernel/Ids.ts"

const created: Decision = {
  id: "01J00000000000000000000000",
  organizationId: "org_1",
  callerName: "Deploy bot",
  roleSlug: "ops",
  status: "pending",
  title: "Ship the release?",
  facts: [],
  links: [],
  options: [
    { id: "yes", label: "Yes" },
    { id: "no", label: "No" }
  ],
  urgency: "normal",
  infoRequests: [],
  assignmentHistory: [],
  createdAt: "2030-01-01T10:00:00.000Z",
  updatedAt: "2030-01-01T10:00:00.000Z",
  version: 0
}

const audience = { holders: ["Ann@example.com", "bob@example.com"], admins: ["root@example.com"] }
const recipients = (events: ReturnType<typeof notificationsFor>) => events.map((e) => e.subject.email)
const categories = (events: ReturnType<typeof notificationsFor>) => events.map((e) => e.data["category"])

describe("what a decision's change tells whom", () => {
  it("a new decision goes to each holder of its role and its direct assignee, with its title and link", () => {
    const events = notificationsFor(undefined, { ...created, directAssigneeEmail: "dee@example.com" }, audience)
    assert.deepStrictEqual(recipients(events), ["ann@example.com", "bob@example.com", "dee@example.com"])
    for (const event of events) {
      assert.isTrue(isUlid(event.id))
      assert.strictEqual(event.type, "decisions.notification.created")
      assert.strictEqual(event.service, "decisions")
      assert.strictEqual(event.subject.companyId, "org_1")
      assert.deepStrictEqual(event.data, {
        title: "Ship the release?",
        body: "Deploy bot asks for your decision.",
        url: "/apps/decisions/decision-01J00000000000000000000000",
        category: "decision_assigned"
      })
    }
    assert.strictEqual(new Set(events.map((e) => e.id)).size, 3)
    // The same change gives the same ids: written again, the hub files it once.
    assert.deepStrictEqual(
      notificationsFor(undefined, { ...created, directAssigneeEmail: "dee@example.com" }, audience).map((e) => e.id),
      events.map((e) => e.id)
    )
  })

  it("nobody to act: the organization's admins hear that it is unrouted", () => {
    const events = notificationsFor(undefined, created, { holders: [], admins: ["root@example.com"] })
    assert.deepStrictEqual(recipients(events), ["root@example.com"])
    assert.deepStrictEqual(categories(events), ["decision_unrouted"])
  })

  it("routing tells the new deciders but not the person who routed it", () => {
    const routed: Decision = {
      ...created,
      roleSlug: "finance",
      assignmentHistory: [
        { actor: "ann@example.com", at: "2030-01-01T11:00:00.000Z", fromRole: "ops", toRole: "finance" }
      ],
      updatedAt: "2030-01-01T11:00:00.000Z",
      version: 1
    }
    const events = notificationsFor(created, routed, audience)
    assert.deepStrictEqual(recipients(events), ["bob@example.com"])
    assert.strictEqual(events[0]!.data["body"], "ann@example.com routed this decision to you.")
    // A second routing is another change: other ids.
    const again = notificationsFor(
      routed,
      { ...routed, assignmentHistory: [...routed.assignmentHistory, routed.assignmentHistory[0]!] },
      audience
    )
    assert.notStrictEqual(again[0]!.id, events[0]!.id)
  })

  it("an answered info request tells its asker; other changes tell nobody", () => {
    const asked: Decision = {
      ...created,
      status: "needs_info",
      infoRequests: [
        { id: "q1", question: "Which one?", askedBy: "ann@example.com", askedAt: "2030-01-01T10:05:00.000Z" }
      ],
      version: 1
    }
    assert.deepStrictEqual(notificationsFor(created, asked, audience), [])
    const answered: Decision = {
      ...asked,
      status: "pending",
      infoRequests: [{ ...asked.infoRequests[0]!, answer: "The blue one", answeredAt: "2030-01-01T10:06:00.000Z" }],
      updatedAt: "2030-01-01T10:06:00.000Z",
      version: 2
    }
    const events = notificationsFor(asked, answered, audience)
    assert.deepStrictEqual(recipients(events), ["ann@example.com"])
    assert.deepStrictEqual(categories(events), ["info_answered"])
    assert.strictEqual(events[0]!.data["body"], "Your question was answered: The blue one")
    assert.deepStrictEqual(notificationsFor(answered, { ...answered, urgency: "urgent", version: 3 }, audience), [])
  })

  it("an answer settles the decision's asking notifications at the hub: one event, how it ended, for everyone", () => {
    const answered: Decision = {
      ...created,
      status: "resolved",
      resolution: {
        kind: "chosen",
        optionId: "yes",
        decidedBy: "Ann@example.com",
        decidedAt: "2030-01-01T12:00:00.000Z"
      },
      updatedAt: "2030-01-01T12:00:00.000Z",
      version: 1
    }
    const events = notificationsFor(created, answered, audience)
    assert.lengthOf(events, 1)
    const [event] = events
    assert.isTrue(isUlid(event!.id))
    assert.strictEqual(event!.type, "decisions.notification.settled")
    assert.deepStrictEqual(event!.subject, { email: "ann@example.com", companyId: "org_1" })
    assert.deepStrictEqual(event!.data, {
      url: "/apps/decisions/decision-01J00000000000000000000000",
      categories: ["decision_assigned", "decision_unrouted", "decision_escalated"],
      body: "Answered by Ann@example.com: Yes."
    })
    // The same change gives the same id: written again, the hub settles once.
    assert.strictEqual(notificationsFor(created, answered, audience)[0]!.id, event!.id)
    // A decision already settled settles nothing more.
    assert.deepStrictEqual(notificationsFor(answered, { ...answered, version: 2 }, audience), [])

    const ended = (next: Partial<Decision>) => notificationsFor(created, { ...created, ...next, version: 1 }, audience)
    const declined = ended({
      status: "resolved",
      resolution: { kind: "declined", decidedBy: "bob@example.com", decidedAt: created.createdAt }
    })
    assert.strictEqual(declined[0]!.data["body"], "Declined by bob@example.com.")
    const expired = ended({
      status: "expired",
      resolution: { kind: "expired", decidedBy: "system:expiry", decidedAt: created.createdAt }
    })
    assert.strictEqual(expired[0]!.data["body"], "Expired without a decision.")
    // Nobody answered: the subject is an address that is no one's.
    assert.strictEqual(expired[0]!.subject.email, "nobody@decisions.invalid")
    const cancelled = ended({ status: "cancelled" })
    assert.deepStrictEqual(
      [cancelled[0]!.type, cancelled[0]!.data["body"]],
      ["decisions.notification.settled", "The caller cancelled this decision."]
    )
  })

  it("a dead-lettered record action tells the admins, once", () => {
    const action = {
      id: "act_1",
      optionId: "yes",
      type: "record_update" as const,
      summary: "Update Deals record: Status",
      status: "retrying" as const,
      attempts: 2,
      target: { baseId: "app", tableId: "tbl", recordId: "rec", fields: { Status: "Won" } }
    }
    const before: Decision = { ...created, status: "resolved", actions: [action], version: 3 }
    const after: Decision = { ...before, actions: [{ ...action, status: "dead_lettered", attempts: 3 }], version: 4 }
    const events = notificationsFor(before, after, audience)
    assert.deepStrictEqual(recipients(events), ["root@example.com"])
    assert.deepStrictEqual(categories(events), ["action_dead_lettered"])
    assert.deepStrictEqual(notificationsFor(after, { ...after, version: 5 }, audience), [])
  })

  it("the catalog's limits hold: title at most 200, body at most 2000, url a workspace path", () => {
    const long: Decision = {
      ...created,
      status: "needs_info",
      infoRequests: [{ id: "q1", question: "?", askedBy: "ann@example.com", askedAt: created.createdAt }]
    }
    const answered: Decision = {
      ...long,
      infoRequests: [{ ...long.infoRequests[0]!, answer: "x".repeat(8192), answeredAt: created.createdAt }]
    }
    const [event] = notificationsFor(long, answered, audience)
    assert.isAtMost((event!.data["body"] as string).length, 2000)
    assert.match(decisionLink("abc"), /^\/(?![/\\])/)
  })
})

describe("stable ULIDs", () => {
  it("encode the time, and the key decides the rest", () => {
    const id = stableUlid(Date.parse("2030-01-01T00:00:00.000Z"), "k")
    assert.isTrue(isUlid(id))
    assert.strictEqual(id, stableUlid(Date.parse("2030-01-01T00:00:00.000Z"), "k"))
    assert.notStrictEqual(id, stableUlid(Date.parse("2030-01-01T00:00:00.000Z"), "k2"))
    assert.isTrue(stableUlid(1000, "a") < stableUlid(2000, "a"))
    assert.strictEqual(stableUlid(0, "a").slice(0, 10), "0000000000")
  })
})
