import { Result } from "effect"
import { epochMs, isoAt } from "../kernel/Timestamp.ts"
import { isOpen, type Decision } from "./Decision.ts"
import { settle, step } from "./DecisionMachine.ts"
import { escalationStepsMax, type EscalationStep, type EscalationStepState } from "./EscalationSchema.ts"

/**
 * The escalation ladder's rules, pure: which ladders are acceptable, when a decision's next step is due, and
 * what running it does to the decision. A decision's steps run in order, each once, only while the decision is
 * open and before its expiry; the worker (core/decisions/Escalations.ts) stores each step's effect and its
 * `ranAt` in one write, so a step is never run twice nor skipped.
 */

/** Who a step's route is recorded as, in the decision's routing history. */
export const escalationActor = "system:escalation"

/** One thing wrong with a ladder: the field (a dotted path from `escalation`) and what is wrong with it. */
export interface LadderProblem {
  readonly field: string
  readonly message: string
}

/**
 * What is wrong with a ladder given for a decision created at `createdAtMs` that expires at `expiresAtMs`
 * (if it does): undefined when nothing is. Steps come in strictly increasing `after`, at most 10, each before
 * the expiry; a route names a role or a person, the other actions neither.
 */
export const ladderProblem = (
  steps: ReadonlyArray<EscalationStep>,
  createdAtMs: number,
  expiresAtMs: number | undefined
): LadderProblem | undefined => {
  if (steps.length > escalationStepsMax) {
    return { field: "escalation", message: `must have at most ${escalationStepsMax} steps` }
  }
  for (const [i, s] of steps.entries()) {
    const previous = steps[i - 1]
    if (previous !== undefined && s.after <= previous.after) {
      return { field: `escalation.${i}.after`, message: "must be greater than the previous step's after" }
    }
    if (expiresAtMs !== undefined && createdAtMs + s.after * 1000 >= expiresAtMs) {
      return { field: `escalation.${i}.after`, message: "must come before the decision's expiresAt" }
    }
    const targeted = s.toRole !== undefined || s.toEmail !== undefined
    if (s.action === "route" && !targeted) {
      return { field: `escalation.${i}.toRole`, message: "a route step needs toRole or toEmail" }
    }
    if (s.action !== "route" && targeted) {
      return { field: `escalation.${i}.action`, message: "only a route step takes toRole or toEmail" }
    }
  }
  return undefined
}

/** A ladder as a decision created at `createdAtMs` stores it: each step with its due time, none run yet. */
export const planLadder = (
  steps: ReadonlyArray<EscalationStep>,
  createdAtMs: number
): ReadonlyArray<EscalationStepState> => steps.map((s) => ({ ...s, dueAt: isoAt(createdAtMs + s.after * 1000) }))

/**
 * A default ladder (a template's or a role's) as it applies to one decision: the steps that come before the
 * decision's expiry. A default never refuses a decision; a ladder given with the decision is checked instead.
 */
export const defaultLadderFor = (
  steps: ReadonlyArray<EscalationStep>,
  createdAtMs: number,
  expiresAtMs: number | undefined
): ReadonlyArray<EscalationStep> =>
  expiresAtMs === undefined ? steps : steps.filter((s) => createdAtMs + s.after * 1000 < expiresAtMs)

/** The index of the decision's next step to run, or undefined when every step has run (or it has none). */
export const nextStepIndex = (decision: Decision): number | undefined => {
  const index = (decision.escalation ?? []).findIndex((s) => s.ranAt === undefined)
  return index === -1 ? undefined : index
}

/**
 * When the decision's next step is due (epoch ms), or undefined when none will ever run: every step has run,
 * the decision is closed, or the step would come at or after its expiry. This is what the store indexes.
 */
export const escalationDueAt = (decision: Decision): number | undefined => {
  if (!isOpen(decision.status)) return undefined
  const index = nextStepIndex(decision)
  if (index === undefined) return undefined
  const due = epochMs(decision.escalation![index]!.dueAt)
  if (decision.expiresAt !== undefined && due >= epochMs(decision.expiresAt)) return undefined
  return due
}

/** Why a step does not run now. */
export type EscalationRefusal =
  { readonly _tag: "Closed" } | { readonly _tag: "Finished" } | { readonly _tag: "NotDue"; readonly dueAt: number }

/** A step that ran: the decision after it, and which step it was. */
export interface Escalated {
  readonly decision: Decision
  readonly index: number
  readonly step: EscalationStepState
}

/**
 * Runs the decision's next step at `nowMs`, if it is due and the decision is open (expiry applied first).
 * A route is the machine's own route move by `system:escalation`, recorded in the routing history; when
 * `routeTargetGone` (its role was archived or removed since), the step is marked `skipped` and changes nothing
 * else. Remind and notify_admins change only the step's mark: whom they tell is the worker's part.
 */
export const escalate = (
  decision: Decision,
  nowMs: number,
  options: { readonly routeTargetGone?: boolean } = {}
): Result.Result<Escalated, EscalationRefusal> => {
  const current = settle(decision, nowMs).decision
  if (!isOpen(current.status)) return Result.fail({ _tag: "Closed" })
  const index = nextStepIndex(current)
  if (index === undefined) return Result.fail({ _tag: "Finished" })
  const due = escalationDueAt(current)
  if (due === undefined) return Result.fail({ _tag: "Finished" })
  if (due > nowMs) return Result.fail({ _tag: "NotDue", dueAt: due })
  const pending = current.escalation![index]!
  const at = isoAt(Math.max(nowMs, epochMs(current.updatedAt)))
  const skipped = pending.action === "route" && options.routeTargetGone === true
  const ran: EscalationStepState = { ...pending, ranAt: at, outcome: skipped ? "skipped" : "done" }
  let moved: Decision = { ...current, updatedAt: at, version: current.version + 1 }
  if (pending.action === "route" && !skipped) {
    const routed = step(
      current,
      {
        _tag: "Route",
        actor: escalationActor,
        toRole: pending.toRole,
        toEmail: pending.toEmail,
        note: `Escalation step ${index + 1}: no answer after ${pending.after} s.`
      },
      nowMs
    )
    // A route with a target is always accepted from an open decision.
    if (Result.isSuccess(routed)) moved = routed.success.decision
  }
  const escalation = current.escalation!.map((s, i) => (i === index ? ran : s))
  return Result.succeed({ decision: { ...moved, escalation }, index, step: ran })
}
