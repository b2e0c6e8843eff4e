import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { DecisionStoreMemory } from "../../adapters/memory/decisions/DecisionStoreMemory.ts"
import { FlowStatsMemory } from "../../adapters/memory/decisions/FlowStatsMemory.ts"
import type { Decision } from "../../core/decisions/Decision.ts"
import { DecisionFlow } from "../../core/decisions/DecisionFlow.ts"
import { DecisionStore } from "../../core/decisions/DecisionStore.ts"
import { percentileCont } from "../../core/decisions/FlowRules.ts"
import { parseFlowPageId, waitLabel } from "../../core/decisions/pages/FlowPage.ts"

const org = "org_flow"
const admin = { organizationId: org, email: "admin@acme.test", isAdmin: true }

const decision = (id: string, createdAt: string, fields: Partial<Decision> = {}): Decision => ({
  id,
  organizationId: org,
  callerName: "agent",
  roleSlug: "finance",
  status: "pending",
  title: id,
  facts: [],
  links: [],
  options: [{ id: "yes", label: "Yes" }],
  urgency: "normal",
  infoRequests: [],
  assignmentHistory: [],
  createdAt,
  updatedAt: createdAt,
  version: 1,
  ...fields
})

const stack = DecisionFlow.layer.pipe(Layer.provideMerge(Layer.provideMerge(FlowStatsMemory, DecisionStoreMemory)))

describe("the flow of decisions (use case)", () => {
  it.effect("covers every day of the window up to today, in seconds to the millisecond, for admins only", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.parse("2030-03-10T15:00:00.000Z"))
      const store = yield* DecisionStore
      yield* store.insert(
        decision("d1", "2030-03-08T10:00:00.000Z", {
          status: "resolved",
          templateSlug: "refund",
          resolution: { kind: "chosen", optionId: "yes", decidedBy: "ada", decidedAt: "2030-03-08T10:00:01.234Z" }
        })
      )
      yield* store.insert(decision("d2", "2030-03-10T14:59:58.600Z"))
      const flow = yield* DecisionFlow

      const week = yield* flow.flow(admin, 3)
      assert.deepStrictEqual(week.window, {
        days: 3,
        from: "2030-03-08",
        to: "2030-03-10",
        asOf: "2030-03-10T15:00:00.000Z"
      })
      assert.deepStrictEqual(week.perDay, [
        { day: "2030-03-08", created: 1, resolved: 1, expired: 0, escalated: 0 },
        { day: "2030-03-09", created: 0, resolved: 0, expired: 0, escalated: 0 },
        { day: "2030-03-10", created: 1, resolved: 0, expired: 0, escalated: 0 }
      ])
      assert.deepStrictEqual(week.timeToDecide, {
        byRole: [{ roleSlug: "finance", decided: 1, medianSeconds: 1.234, p90Seconds: 1.234 }],
        byTemplate: [{ templateSlug: "refund", decided: 1, medianSeconds: 1.234, p90Seconds: 1.234 }]
      })
      assert.deepStrictEqual(week.oldestWaiting, [
        {
          id: "d2",
          title: "d2",
          roleSlug: "finance",
          status: "pending",
          createdAt: "2030-03-10T14:59:58.600Z",
          waitingSeconds: 1
        }
      ])
      // The default window is 30 days; the resolution two days ago is in a window of 3, not of 1.
      assert.strictEqual((yield* flow.flow(admin)).perDay.length, 30)
      const today = yield* flow.flow(admin, 1)
      assert.deepStrictEqual(today.timeToDecide.byRole, [])
      assert.strictEqual(today.window.from, "2030-03-10")

      const refused = yield* Effect.flip(flow.flow({ ...admin, isAdmin: false }))
      assert.strictEqual(refused._tag, "Forbidden")
    }).pipe(Effect.provide(stack))
  )

  it("interpolates percentiles as percentile_cont does", () => {
    assert.strictEqual(percentileCont([5], 0.9), 5)
    assert.strictEqual(percentileCont([1, 2, 3, 4], 0.5), 2.5)
    assert.strictEqual(percentileCont([10, 20, 30, 40, 50, 60, 70, 80, 90, 100], 0.9), 91)
    assert.strictEqual(percentileCont([0, 100], 0.9), 90)
  })

  it("names flow pages one way each, and waits in words", () => {
    assert.strictEqual(parseFlowPageId("flow"), 30)
    assert.strictEqual(parseFlowPageId("flow-7"), 7)
    assert.strictEqual(parseFlowPageId("flow-365"), 365)
    for (const id of ["flow-30", "flow-0", "flow-07", "flow-366", "flow-", "flows", "flow-1e2"]) {
      assert.isUndefined(parseFlowPageId(id), id)
    }
    assert.strictEqual(waitLabel(40), "40 s")
    assert.strictEqual(waitLabel(125), "2 min")
    assert.strictEqual(waitLabel(3 * 3600 + 300), "3 h 5 min")
    assert.strictEqual(waitLabel(2 * 86_400 + 4 * 3600), "2 d 4 h")
  })
})
