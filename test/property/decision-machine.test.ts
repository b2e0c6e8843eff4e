import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import * as fc from "fast-check"
import type { Decision, DecisionStatus } from "../../core/decisions/Decision.ts"
import { settle, step, type Command } from "../../core/decisions/DecisionMachine.ts"
import { epochMs, isoAt } from "../../core/kernel/Timestamp.ts"

const t0 = Date.parse("2026-01-01T00:00:00.000Z")

const makeDecision = (expiresInMs: number | undefined, withDefault: boolean): Decision => ({
  id: "01JDECISION0000000000000000",
  organizationId: "org_1",
  callerName: "agent",
  roleSlug: "finance",
  status: "pending",
  title: "Approve the refund?",
  facts: [],
  links: [],
  options: [
    { id: "opt_yes", label: "Yes", ...(withDefault ? { default: true } : {}) },
    { id: "opt_no", label: "No" }
  ],
  urgency: "normal",
  ...(expiresInMs === undefined ? {} : { expiresAt: isoAt(t0 + expiresInMs) }),
  ...(withDefault ? { defaultOptionId: "opt_yes" } : {}),
  infoRequests: [],
  assignmentHistory: [],
  createdAt: isoAt(t0),
  updatedAt: isoAt(t0),
  version: 0
})

/** The model: what the status must be, from the rules written as plainly as possible. */
interface Model {
  status: DecisionStatus
  /** The status last written to the store (expiry by time alone persists nothing). */
  stored: DecisionStatus
  openQuestion: string | undefined
  questions: number
  routes: number
  now: number
  readonly expiresAt: number | undefined
  readonly hasDefault: boolean
}

interface Real {
  decision: Decision
  now: number
}

const open = (m: Model) => m.status === "pending" || m.status === "needs_info"

/** Applies expiry to the model exactly as the rule says: an open decision past expiresAt is expired. */
const expireModel = (m: Model) => {
  if (open(m) && m.expiresAt !== undefined && m.expiresAt <= m.now) {
    m.status = "expired"
    m.openQuestion = undefined
  }
}

const checkInvariants = (previous: Decision, d: Decision) => {
  switch (d.status) {
    case "resolved":
      assert.include(["chosen", "declined"], d.resolution?.kind)
      break
    case "expired":
      assert.include(["expired", "expired_default"], d.resolution?.kind)
      assert.strictEqual(d.resolution?.decidedBy, "system:expiry")
      assert.strictEqual(d.resolution?.kind === "expired_default", d.defaultOptionId !== undefined)
      break
    default:
      assert.isUndefined(d.resolution)
  }
  if (d.resolution !== undefined) assert.isAtLeast(epochMs(d.resolution.decidedAt), epochMs(d.createdAt))
  if (d.resolution?.kind === "chosen" || d.resolution?.kind === "expired_default") {
    assert.isTrue(d.options.some((o) => o.id === d.resolution!.optionId))
  }
  assert.isAtLeast(d.infoRequests.length, previous.infoRequests.length)
  assert.isAtLeast(d.assignmentHistory.length, previous.assignmentHistory.length)
  assert.deepStrictEqual(d.assignmentHistory.slice(0, previous.assignmentHistory.length), previous.assignmentHistory)
  assert.isAtLeast(epochMs(d.updatedAt), epochMs(previous.updatedAt))
  assert.isAtLeast(d.version, previous.version)
}

/** Runs one command against the real machine; a refusal must leave the decision exactly as it was. */
const run = (real: Real, command: Command): boolean => {
  const before = real.decision
  const result = step(before, command, real.now)
  if (Result.isFailure(result)) {
    assert.strictEqual(real.decision, before)
    return false
  }
  checkInvariants(before, result.success.decision)
  real.decision = result.success.decision
  return true
}

/** `AnswerInfo` with the "__latest__" marker answers whatever question is open in the real decision. */
const resolveMarkers = (real: Real, command: Command): Command =>
  command._tag === "AnswerInfo" && command.infoRequestId === "__latest__"
    ? { ...command, infoRequestId: real.decision.infoRequests.at(-1)?.id ?? "none" }
    : command

class Act implements fc.Command<Model, Real> {
  constructor(
    readonly command: Command,
    readonly expected: (m: Model) => boolean,
    readonly apply: (m: Model) => void
  ) {}
  check = () => true
  run(m: Model, r: Real) {
    expireModel(m)
    const shouldSucceed = this.expected(m)
    const succeeded = run(r, resolveMarkers(r, this.command))
    assert.strictEqual(succeeded, shouldSucceed, `${this.command._tag} from ${m.status}`)
    if (succeeded) {
      this.apply(m)
      m.stored = m.status
    }
    // A refused move persists nothing, so compare what a reader sees now.
    assert.strictEqual(settle(r.decision, r.now).decision.status, m.status)
    assert.strictEqual(r.decision.infoRequests.length, m.questions)
    assert.strictEqual(r.decision.assignmentHistory.length, m.routes)
  }
  toString = () => JSON.stringify(this.command)
}

class Tick implements fc.Command<Model, Real> {
  constructor(readonly ms: number) {}
  check = () => true
  run(m: Model, r: Real) {
    m.now += this.ms
    r.now += this.ms
    // Reading at any time gives the status the rule says, whether or not anything persisted it.
    const seen = settle(r.decision, r.now).decision.status
    expireModel(m)
    assert.strictEqual(seen, m.status)
  }
  toString = () => `tick(${this.ms})`
}

const actor = "ada@example.com"

const commands = [
  fc.constantFrom("opt_yes", "opt_no", "opt_missing").map(
    (optionId) =>
      new Act(
        { _tag: "Choose", actor, optionId },
        (m) => open(m) && optionId !== "opt_missing",
        (m) => {
          m.status = "resolved"
        }
      )
  ),
  fc.constant(
    new Act({ _tag: "Decline", actor, rationale: "no budget" }, open, (m) => {
      m.status = "resolved"
    })
  ),
  fc.integer({ min: 0, max: 1000 }).map(
    (n) =>
      new Act(
        { _tag: "AskInfo", actor, infoRequestId: `q${n}`, question: "Which account?" },
        (m) => m.status === "pending",
        (m) => {
          m.status = "needs_info"
          m.openQuestion = `q${n}`
          m.questions += 1
        }
      )
  ),
  fc.boolean().map(
    (matching) =>
      new Act(
        { _tag: "AnswerInfo", infoRequestId: matching ? "__latest__" : "q-unknown", answer: "Account 7" },
        (m) => m.status === "needs_info" && matching,
        (m) => {
          m.status = "pending"
          m.openQuestion = undefined
        }
      )
  ),
  fc
    .constantFrom<Command>(
      { _tag: "Route", actor, toRole: "legal", note: "needs a lawyer" },
      { _tag: "Route", actor, toEmail: "lin@example.com" },
      { _tag: "Route", actor }
    )
    .map(
      (command) =>
        new Act(
          command,
          (m) => open(m) && (command._tag !== "Route" || command.toRole !== undefined || command.toEmail !== undefined),
          (m) => {
            m.routes += 1
          }
        )
    ),
  fc.constant(
    new Act({ _tag: "Cancel" }, open, (m) => {
      m.status = "cancelled"
    })
  ),
  fc.constant(
    new Act(
      { _tag: "Expire" },
      (m) => m.status === "expired" && (m.stored === "pending" || m.stored === "needs_info"),
      () => {}
    )
  ),
  fc.integer({ min: 1, max: 120_000 }).map((ms) => new Tick(ms))
]

describe("the decision state machine (model-based)", () => {
  it("agrees with the model on every random sequence of moves and clock ticks", () => {
    fc.assert(
      fc.property(
        fc.option(fc.integer({ min: 1, max: 600_000 }), { nil: undefined }),
        fc.boolean(),
        fc.commands(commands, { maxCommands: 60 }),
        (expiresIn, withDefault, cmds) => {
          const hasDefault = withDefault && expiresIn !== undefined
          const setup = () => ({
            model: {
              status: "pending" as DecisionStatus,
              stored: "pending" as DecisionStatus,
              openQuestion: undefined,
              questions: 0,
              routes: 0,
              now: t0,
              expiresAt: expiresIn === undefined ? undefined : t0 + expiresIn,
              hasDefault
            },
            real: { decision: makeDecision(expiresIn, hasDefault), now: t0 }
          })
          fc.modelRun(setup, cmds)
        }
      ),
      { numRuns: 300 }
    )
  })

  it("expires with the default option at expiresAt, dated expiresAt, whenever it is noticed", () => {
    const decision = makeDecision(60_000, true)
    const late = settle(decision, t0 + 3_600_000).decision
    assert.strictEqual(late.status, "expired")
    assert.deepStrictEqual(late.resolution, {
      kind: "expired_default",
      optionId: "opt_yes",
      decidedBy: "system:expiry",
      decidedAt: isoAt(t0 + 60_000)
    })
    assert.deepStrictEqual(settle(decision, t0 + 60_001).decision, late)
  })

  it("refuses to choose an expired decision with invalid_transition", () => {
    const result = step(makeDecision(1_000, false), { _tag: "Choose", actor, optionId: "opt_yes" }, t0 + 1_000)
    assert.deepStrictEqual(Result.isFailure(result) && result.failure, {
      _tag: "InvalidTransition",
      status: "expired",
      command: "Choose"
    })
  })

  it("lets a decider choose while an info request is open", () => {
    const asked = step(
      makeDecision(undefined, false),
      { _tag: "AskInfo", actor, infoRequestId: "q1", question: "?" },
      t0
    )
    assert.isTrue(Result.isSuccess(asked))
    const chosen = step(Result.getOrThrow(asked).decision, { _tag: "Choose", actor, optionId: "opt_no" }, t0 + 5)
    assert.strictEqual(Result.getOrThrow(chosen).decision.status, "resolved")
  })
})
