import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { randomUUID } from "node:crypto"
import { monotonicFactory } from "ulid"
import type { AssignmentChange, Decision, Resolution } from "../../core/decisions/Decision.ts"
import { DecisionStore } from "../../core/decisions/DecisionStore.ts"
import { escalationActor, FlowStatsStore, type FlowReading, type FlowWindow } from "../../core/decisions/FlowStats.ts"

// Three UTC days, 2030-01-01 to 2030-01-03, read at noon of the last one.
const window = (organizationId: string, oldestLimit = 10): FlowWindow => ({
  organizationId,
  fromIso: "2030-01-01T00:00:00.000Z",
  toIso: "2030-01-04T00:00:00.000Z",
  nowIso: "2030-01-03T12:00:00.000Z",
  oldestLimit
})

const nextId = monotonicFactory()
const freshOrganization = () => `org_${randomUUID()}`
const hour = 3_600_000

const decisionIn = (organizationId: string, createdAt: string, fields: Partial<Decision> = {}): Decision => ({
  id: nextId(),
  organizationId,
  callerName: "billing-agent",
  roleSlug: "finance",
  status: "pending",
  title: `Decision created ${createdAt}`,
  facts: [],
  links: [],
  options: [{ id: "opt_yes", label: "Yes" }],
  urgency: "normal",
  infoRequests: [],
  assignmentHistory: [],
  createdAt,
  updatedAt: createdAt,
  version: 1,
  ...fields
})

const chosen = (decidedAt: string): Partial<Decision> => ({
  status: "resolved",
  resolution: { kind: "chosen", optionId: "opt_yes", decidedBy: "ada@example.com", decidedAt } satisfies Resolution
})
const escalatedAt = (at: string): AssignmentChange => ({ actor: escalationActor, at, toRole: "legal" })

/**
 * A decision with an escalation ladder, as the escalation worker keeps it on the decision (each step's `ranAt`
 * and `outcome` once it ran); the decision's own type may not name the ladder, so it is added here.
 */
const withLadder = (
  decision: Decision,
  steps: ReadonlyArray<{ readonly action: string; readonly ranAt?: string; readonly outcome?: string }>
): Decision =>
  ({
    ...decision,
    escalation: steps.map((step, n) => ({ after: 60 * (n + 1), dueAt: decision.createdAt, ...step }))
  }) as Decision

/**
 * One organization's decisions around the window, each with what it should count for:
 *
 * | decision | created    | what happened                            | counts                                   |
 * | -------- | ---------- | ---------------------------------------- | ---------------------------------------- |
 * | a        | 12-31 10:00 | chosen 01-01 10:00 (refund)             | resolved 01-01; finance, refund: 24 h    |
 * | b        | 01-01 08:00 | chosen 01-01 09:00 (refund)             | created, resolved 01-01; 1 h             |
 * | c        | 01-01 12:00 | declined 01-02 00:00                    | created 01-01, resolved 01-02; 12 h      |
 * | d        | 01-02 06:00 | chosen 01-02 06:30, legal (contract)    | created, resolved 01-02; legal 30 min    |
 * | e        | 01-02 07:00 | chosen 01-02 08:00 (refund)             | created, resolved 01-02; 1 h             |
 * | f        | 01-01 01:00 | expired (swept) 01-02 01:00             | created 01-01, expired 01-02             |
 * | g        | 01-02 02:00 | pending, expiry 01-03 06:00 passed      | created 01-02, expired 01-03 (unswept)   |
 * | h        | 12-20 00:00 | waiting; escalated 12-25, 01-02 twice   | escalated 01-02 (once); oldest waiting   |
 * | i        | 01-03 09:00 | needs_info, expiry 01-05; escalated     | created, escalated 01-03; waiting        |
 * | j        | 01-03 11:00 | waiting                                 | created 01-03; waiting                   |
 * | k        | 01-01 05:00 | cancelled                               | created 01-01                            |
 * | l        | 12-01 00:00 | chosen 12-02                            | nothing (before the window)              |
 * | m        | 01-01 03:00 | cancelled; ladder: 2 steps ran 01-01,   | created, escalated 01-01 (once); the     |
 * |          |             | a route skipped 01-02, one never ran    | skipped and unrun steps count for nothing |
 *
 * i's route is both a step of its ladder and a change of its routing: it counts once.
 */
const seed = (org: string) => {
  const at = (text: string) => `${text}:00.000Z`
  const h = decisionIn(org, at("2029-12-20T00:00"), {
    assignmentHistory: [
      escalatedAt(at("2029-12-25T00:00")),
      escalatedAt(at("2030-01-02T03:00")),
      escalatedAt(at("2030-01-02T05:00")),
      { actor: "admin@example.com", at: at("2030-01-03T01:00"), toRole: "finance" }
    ]
  })
  const i = withLadder(
    decisionIn(org, at("2030-01-03T09:00"), {
      status: "needs_info",
      expiresAt: at("2030-01-05T00:00"),
      assignmentHistory: [escalatedAt(at("2030-01-03T10:00"))]
    }),
    [{ action: "route", ranAt: at("2030-01-03T10:00"), outcome: "done" }]
  )
  const j = decisionIn(org, at("2030-01-03T11:00"))
  return {
    waiting: [h, i, j],
    all: [
      decisionIn(org, at("2029-12-31T10:00"), { ...chosen(at("2030-01-01T10:00")), templateSlug: "refund" }),
      decisionIn(org, at("2030-01-01T08:00"), { ...chosen(at("2030-01-01T09:00")), templateSlug: "refund" }),
      decisionIn(org, at("2030-01-01T12:00"), {
        status: "resolved",
        resolution: { kind: "declined", decidedBy: "ada@example.com", decidedAt: at("2030-01-02T00:00") }
      }),
      decisionIn(org, at("2030-01-02T06:00"), {
        ...chosen(at("2030-01-02T06:30")),
        roleSlug: "legal",
        templateSlug: "contract"
      }),
      decisionIn(org, at("2030-01-02T07:00"), { ...chosen(at("2030-01-02T08:00")), templateSlug: "refund" }),
      decisionIn(org, at("2030-01-01T01:00"), {
        status: "expired",
        expiresAt: at("2030-01-02T01:00"),
        resolution: { kind: "expired", decidedBy: "system:expiry", decidedAt: at("2030-01-02T01:00") }
      }),
      decisionIn(org, at("2030-01-02T02:00"), { expiresAt: at("2030-01-03T06:00") }),
      h,
      i,
      j,
      decisionIn(org, at("2030-01-01T05:00"), { status: "cancelled" }),
      decisionIn(org, at("2029-12-01T00:00"), chosen(at("2029-12-02T00:00"))),
      withLadder(decisionIn(org, at("2030-01-01T03:00"), { status: "cancelled" }), [
        { action: "remind", ranAt: at("2030-01-01T04:00"), outcome: "done" },
        { action: "notify_admins", ranAt: at("2030-01-01T06:00"), outcome: "done" },
        { action: "route", ranAt: at("2030-01-02T01:00"), outcome: "skipped" },
        { action: "remind" }
      ])
    ]
  }
}

/** Times to the millisecond: the stores' floating-point interpolation is compared where it matters. */
const rounded = (reading: FlowReading) => ({
  ...reading,
  byRole: reading.byRole.map((t) => ({ ...t, medianMs: Math.round(t.medianMs), p90Ms: Math.round(t.p90Ms) })),
  byTemplate: reading.byTemplate.map((t) => ({ ...t, medianMs: Math.round(t.medianMs), p90Ms: Math.round(t.p90Ms) }))
})

const seeded = Effect.fnUntraced(function* (org: string) {
  const store = yield* DecisionStore
  const data = seed(org)
  for (const decision of data.all) yield* store.insert(decision)
  return data
})

/** The FlowStatsStore port's contract (core/decisions/FlowStats.ts), run on every adapter with its decision store. */
export const FlowStatsContract = (name: string, stores: Layer.Layer<FlowStatsStore | DecisionStore, unknown>) =>
  describe(`FlowStatsStore contract (${name})`, () =>
    layer(stores, { excludeTestServices: true })((it) => {
      it.effect("counts per day, times to decide per role and template, and the oldest waiting, exactly", () =>
        Effect.gen(function* () {
          const org = freshOrganization()
          const { waiting } = yield* seeded(org)
          const reading = yield* (yield* FlowStatsStore).read(window(org))
          assert.deepStrictEqual(rounded(reading), {
            days: [
              { day: "2030-01-01", created: 5, resolved: 2, expired: 0, escalated: 1 },
              { day: "2030-01-02", created: 3, resolved: 3, expired: 1, escalated: 1 },
              { day: "2030-01-03", created: 2, resolved: 0, expired: 1, escalated: 1 }
            ],
            // finance: 1 h, 1 h, 12 h, 24 h; legal: 30 min.
            byRole: [
              { key: "finance", decided: 4, medianMs: 23_400_000, p90Ms: 73_440_000 },
              { key: "legal", decided: 1, medianMs: 0.5 * hour, p90Ms: 0.5 * hour }
            ],
            // refund: 1 h, 1 h, 24 h; contract: 30 min; the declined decision was raised from no template.
            byTemplate: [
              { key: "contract", decided: 1, medianMs: 0.5 * hour, p90Ms: 0.5 * hour },
              { key: "refund", decided: 3, medianMs: hour, p90Ms: 69_840_000 }
            ],
            oldestWaiting: waiting.map((d) => ({
              id: d.id,
              title: d.title,
              roleSlug: d.roleSlug,
              status: d.status as "pending" | "needs_info",
              createdAt: d.createdAt
            }))
          })
        })
      )

      it.effect("the oldest waiting list stops at its limit, oldest first", () =>
        Effect.gen(function* () {
          const org = freshOrganization()
          const { waiting } = yield* seeded(org)
          const reading = yield* (yield* FlowStatsStore).read(window(org, 2))
          assert.deepStrictEqual(
            reading.oldestWaiting.map((d) => d.id),
            waiting.slice(0, 2).map((d) => d.id)
          )
        })
      )

      it.effect("another organization's decisions never count, and an organization without any reads empty", () =>
        Effect.gen(function* () {
          const [org, other, empty] = [freshOrganization(), freshOrganization(), freshOrganization()]
          yield* seeded(org)
          const store = yield* DecisionStore
          yield* store.insert(
            decisionIn(other, "2030-01-02T10:00:00.000Z", {
              ...chosen("2030-01-02T10:10:00.000Z"),
              roleSlug: "finance",
              templateSlug: "refund",
              assignmentHistory: [escalatedAt("2030-01-02T10:05:00.000Z")]
            })
          )
          yield* store.insert(decisionIn(other, "2030-01-03T10:00:00.000Z"))
          const flow = yield* FlowStatsStore
          const theirs = yield* flow.read(window(other))
          assert.deepStrictEqual(theirs.days, [
            { day: "2030-01-02", created: 1, resolved: 1, expired: 0, escalated: 1 },
            { day: "2030-01-03", created: 1, resolved: 0, expired: 0, escalated: 0 }
          ])
          assert.deepStrictEqual(rounded(theirs).byRole, [
            { key: "finance", decided: 1, medianMs: 600_000, p90Ms: 600_000 }
          ])
          assert.deepStrictEqual(
            theirs.byTemplate.map((t) => [t.key, t.decided]),
            [["refund", 1]]
          )
          assert.deepStrictEqual(
            theirs.oldestWaiting.map((d) => d.createdAt),
            ["2030-01-03T10:00:00.000Z"]
          )
          const mine = yield* flow.read(window(org))
          assert.deepStrictEqual(
            mine.days.map((d) => d.created),
            [5, 3, 2]
          )
          assert.deepStrictEqual(yield* flow.read(window(empty)), {
            days: [],
            byRole: [],
            byTemplate: [],
            oldestWaiting: []
          })
        })
      )
    }))
