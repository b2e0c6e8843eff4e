import { Effect } from "effect"
import { epochMs } from "../kernel/Timestamp.ts"
import type { DecisionCreate } from "./Decision.ts"
import { validationError } from "./DecisionRules.ts"
import { defaultLadderFor, ladderProblem, planLadder } from "./Escalation.ts"
import type { EscalationStep, EscalationStepState } from "./EscalationSchema.ts"
import type { Role } from "./Role.ts"
import { RoleStore } from "./RoleStore.ts"

/**
 * The ladder a new decision gets: the one given with it (a template's, when raised), checked (a 400 naming
 * the step otherwise: order, count, expiry, and a route's role active in the organization), or else its
 * role's default, less any step at or after the decision's expiry. Undefined: no ladder.
 */
export const makeLadderFor = Effect.gen(function* () {
  const roles = yield* RoleStore
  return Effect.fnUntraced(function* (organizationId: string, input: DecisionCreate, role: Role, nowMs: number) {
    const expiresAtMs = input.expiresAt === undefined ? undefined : epochMs(input.expiresAt)
    const given = input.escalation
    if (given === undefined) {
      const steps = defaultLadderFor(role.escalation ?? [], nowMs, expiresAtMs)
      return steps.length === 0 ? undefined : planLadder(steps, nowMs)
    }
    const problem = ladderProblem(given, nowMs, expiresAtMs)
    if (problem !== undefined) return yield* validationError(problem.field, problem.message)
    for (const [i, s] of given.entries()) {
      if (s.toRole === undefined || s.toRole === role.slug) continue
      const target = yield* roles.get(organizationId, s.toRole)
      if (target === undefined || target.archivedAt !== undefined) {
        return yield* validationError(`escalation.${i}.toRole`, "must name an active role of the organization")
      }
    }
    return given.length === 0 ? undefined : (planLadder(given, nowMs) satisfies ReadonlyArray<EscalationStepState>)
  })
})

/**
 * A default ladder (a role's or a template's) is checked when it is set for what can be checked without a
 * decision: order, count and each step's target. Against an expiry it is cut, not refused (`defaultLadderFor`).
 */
export const defaultLadderProblem = (steps: ReadonlyArray<EscalationStep> | undefined) => {
  const problem = steps === undefined ? undefined : ladderProblem(steps, 0, undefined)
  return problem === undefined ? Effect.void : Effect.fail(validationError(problem.field, problem.message))
}
