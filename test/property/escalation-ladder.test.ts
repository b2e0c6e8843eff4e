import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import * as fc from "fast-check"
import type { Decision } from "../../core/decisions/Decision.ts"
import { step } from "../../core/decisions/DecisionMachine.ts"
import {
  escalate,
  escalationActor,
  escalationDueAt,
  ladderProblem,
  planLadder
} from "../../core/decisions/Escalation.ts"
import type { EscalationStep } from "../../core/decisions/EscalationSchema.ts"
import { epochMs, isoAt } from "../../core/kernel/Timestamp.ts"

const t0 = Date.parse("2026-01-01T00:00:00.000Z")

const stepArb: fc.Arbitrary<EscalationStep> = fc
  .record({
    after: fc.integer({ min: 1, max: 600 }),
    action: fc.constantFrom("remind" as const, "route" as const, "notify_admins" as const),
    toRole: fc.option(fc.constantFrom("legal", "ops"), { nil: undefined }),
    toEmail: fc.option(fc.constant("zed@acme.test"), { nil: undefined })
  })
  .map(({ toRole, toEmail, ...s }) => ({
    ...s,
    ...(toRole === undefined ? {} : { toRole }),
    ...(toEmail === undefined ? {} : { toEmail })
  }))

/** A ladder that passes the checks: strictly increasing, routes with a target, the others without. */
const validLadder = fc
  .uniqueArray(fc.integer({ min: 1, max: 600 }), { maxLength: 10 })
  .chain((afters) =>
    fc.tuple(
      ...[...afters]
        .sort((a, b) => a - b)
        .map((after) =>
          fc.oneof(
            fc.constant<EscalationStep>({ after, action: "remind" }),
            fc.constant<EscalationStep>({ after, action: "notify_admins" }),
            fc.constantFrom<EscalationStep>(
              { after, action: "route", toRole: "legal" },
              { after, action: "route", toEmail: "zed@acme.test" },
              { after, action: "route", toRole: "ops", toEmail: "zed@acme.test" }
            )
          )
        )
    )
  )

const decisionWith = (ladder: ReadonlyArray<EscalationStep>, expiresAtMs: number | undefined): Decision => ({
  id: "01JDECISION0000000000000000",
  organizationId: "org_1",
  callerName: "agent",
  roleSlug: "finance",
  status: "pending",
  title: "Approve the refund?",
  facts: [],
  links: [],
  options: [
    { id: "opt_yes", label: "Yes" },
    { id: "opt_no", label: "No" }
  ],
  urgency: "normal",
  ...(expiresAtMs === undefined ? {} : { expiresAt: isoAt(expiresAtMs) }),
  infoRequests: [],
  assignmentHistory: [],
  ...(ladder.length === 0 ? {} : { escalation: planLadder(ladder, t0) }),
  createdAt: isoAt(t0),
  updatedAt: isoAt(t0),
  version: 0
})

type Command =
  | { readonly _tag: "Advance"; readonly ms: number }
  | { readonly _tag: "Run" }
  /** A worker that read the decision before the last write: its save is refused (versions differ). */
  | { readonly _tag: "StaleRun" }
  | { readonly _tag: "Snapshot" }
  | { readonly _tag: "Resolve" }

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  fc.integer({ min: 1, max: 120_000 }).map((ms) => ({ _tag: "Advance", ms }) as const),
  fc.constant({ _tag: "Run" } as const),
  fc.constant({ _tag: "Run" } as const),
  fc.constant({ _tag: "StaleRun" } as const),
  fc.constant({ _tag: "Snapshot" } as const),
  fc.constant({ _tag: "Resolve" } as const)
)

describe("escalation ladder (property)", () => {
  it("a ladder is accepted exactly when it is short enough, increasing, before the expiry and well-targeted", () =>
    fc.assert(
      fc.property(
        fc.array(stepArb, { maxLength: 12 }),
        fc.option(fc.integer({ min: 1, max: 700 }), { nil: undefined }),
        (steps, expiresInSeconds) => {
          const expiresAt = expiresInSeconds === undefined ? undefined : t0 + expiresInSeconds * 1000
          const model =
            steps.length <= 10 &&
            steps.every((s, i) => i === 0 || s.after > steps[i - 1]!.after) &&
            steps.every((s) => expiresInSeconds === undefined || s.after < expiresInSeconds) &&
            steps.every((s) => (s.action === "route") === (s.toRole !== undefined || s.toEmail !== undefined))
          assert.strictEqual(ladderProblem(steps, t0, expiresAt) === undefined, model, JSON.stringify(steps))
        }
      ),
      { numRuns: 500 }
    ))

  it("steps run in order, each once, when due, and never once the decision has closed", () =>
    fc.assert(
      fc.property(
        validLadder,
        fc.option(fc.integer({ min: 1, max: 700 }), { nil: undefined }),
        fc.array(commandArb, { maxLength: 40 }),
        (ladder, expiresInSeconds, commands) => {
          const expiresAt = expiresInSeconds === undefined ? undefined : t0 + expiresInSeconds * 1000
          let stored = decisionWith(ladder, expiresAt)
          let snapshot = stored
          let now = t0
          // The model: how many steps ran, when each ran, and when the decision closed (answered or expired).
          let ran = 0
          const ranAt: Array<number> = []
          let resolvedAt: number | undefined
          const due = (i: number) => t0 + ladder[i]!.after * 1000
          const modelNext = () =>
            ran < ladder.length && resolvedAt === undefined && due(ran) < (expiresAt ?? Infinity) ? due(ran) : undefined

          for (const command of commands) {
            switch (command._tag) {
              case "Advance":
                now += command.ms
                break
              case "Snapshot":
                snapshot = stored
                break
              case "Resolve": {
                const chosen = step(stored, { _tag: "Choose", actor: "ann@acme.test", optionId: "opt_yes" }, now)
                if (Result.isSuccess(chosen)) {
                  stored = chosen.success.decision
                  resolvedAt = now
                }
                break
              }
              case "Run":
              case "StaleRun": {
                const read = command._tag === "Run" ? stored : snapshot
                const result = escalate(read, now)
                const expected = modelNext() !== undefined && modelNext()! <= now && now < (expiresAt ?? Infinity)
                if (command._tag === "Run") assert.strictEqual(Result.isSuccess(result), expected)
                // The store's optimistic write: only a save from the stored version applies.
                if (Result.isSuccess(result) && read.version === stored.version) {
                  stored = result.success.decision
                  ranAt.push(now)
                  ran++
                }
                break
              }
            }
            const steps = stored.escalation ?? []
            assert.deepStrictEqual(
              steps.map((s) => s.ranAt !== undefined),
              ladder.map((_, i) => i < ran)
            )
            assert.deepStrictEqual(
              steps.flatMap((s) => (s.ranAt === undefined ? [] : [epochMs(s.ranAt)])),
              ranAt
            )
            for (const [i, at] of ranAt.entries()) {
              assert.isAtLeast(at, due(i))
              // Before the expiry, and never after the answer (a step and an answer in one instant: the step first).
              assert.isBelow(at, expiresAt ?? Infinity)
              assert.isAtMost(at, resolvedAt ?? Infinity)
            }
            const routes = ladder.slice(0, ran).filter((s) => s.action === "route")
            assert.strictEqual(
              stored.assignmentHistory.filter((c) => c.actor === escalationActor).length,
              routes.length
            )
            // A route to a person alone keeps the role it found: the role is the last route's that named one.
            assert.strictEqual(stored.roleSlug, routes.findLast((s) => s.toRole !== undefined)?.toRole ?? "finance")
            // What the store indexes is the model's next due step while the decision is open.
            assert.strictEqual(
              escalationDueAt(stored),
              stored.status === "pending" && resolvedAt === undefined ? modelNext() : undefined
            )
          }
        }
      ),
      { numRuns: 300 }
    ))
})
