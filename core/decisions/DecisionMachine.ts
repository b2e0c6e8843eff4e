import { Result } from "effect"
import { epochMs, isoAt } from "../kernel/Timestamp.ts"
import { stepAction } from "./ActionMachine.ts"
import { expiryActor, isOpen, type AssignmentChange, type Decision, type DecisionStatus } from "./Decision.ts"
import { castVote, type Ballot } from "./Quorum.ts"

/**
 * The decision state machine, pure and total:
 * `step(decision, command, now)` answers the next decision and what the change implies, or a refusal.
 *
 * Expiry is applied before any command (`settle`): a decision past `expiresAt` is never open, whoever
 * looks at it and whenever the scheduler last ran. Its resolution is dated `expiresAt`, not the moment it
 * was noticed, so every reader computes the same answer.
 */
export type Command =
  | {
      readonly _tag: "Choose"
      readonly actor: string
      readonly optionId: string
      readonly rationale?: string | undefined
    }
  | { readonly _tag: "Decline"; readonly actor: string; readonly rationale?: string | undefined }
  | { readonly _tag: "AskInfo"; readonly actor: string; readonly infoRequestId: string; readonly question: string }
  | { readonly _tag: "AnswerInfo"; readonly infoRequestId: string; readonly answer: string }
  | {
      readonly _tag: "Route"
      readonly actor: string
      readonly toRole?: string | undefined
      readonly toEmail?: string | undefined
      readonly note?: string | undefined
    }
  | { readonly _tag: "Cancel" }
  | { readonly _tag: "Expire" }

/** What a transition implies beyond the new state: webhooks and record actions. */
export type Consequence =
  | { readonly _tag: "StatusChanged"; readonly from: DecisionStatus; readonly to: DecisionStatus }
  | { readonly _tag: "OptionApplied"; readonly optionId: string }

export type Refusal =
  | { readonly _tag: "InvalidTransition"; readonly status: DecisionStatus; readonly command: Command["_tag"] }
  | { readonly _tag: "UnknownOption"; readonly optionId: string }
  | { readonly _tag: "NoOpenInfoRequest"; readonly infoRequestId: string }
  | { readonly _tag: "EmptyRoute" }

export interface Transition {
  readonly decision: Decision
  readonly consequences: ReadonlyArray<Consequence>
}

const isDue = (decision: Decision, nowMs: number) =>
  isOpen(decision.status) && decision.expiresAt !== undefined && epochMs(decision.expiresAt) <= nowMs

const expire = (decision: Decision): Transition => {
  const at = decision.expiresAt!
  const withDefault = decision.defaultOptionId !== undefined
  return {
    decision: {
      ...decision,
      status: "expired",
      resolution: withDefault
        ? { kind: "expired_default", optionId: decision.defaultOptionId!, decidedBy: expiryActor, decidedAt: at }
        : { kind: "expired", decidedBy: expiryActor, decidedAt: at },
      updatedAt: at,
      version: decision.version + 1
    },
    consequences: [
      { _tag: "StatusChanged", from: decision.status, to: "expired" },
      ...(withDefault ? [{ _tag: "OptionApplied", optionId: decision.defaultOptionId! } as const] : [])
    ]
  }
}

/**
 * When a decision closes, each of its record actions is triggered (the decisions contract: "a template action attached
 * to the option is triggered"): the action of the applied option (chosen, or the default on expiry) is
 * queued, every other one is not_triggered. It happens in the same step as the resolution, so the two are
 * stored together.
 */
const triggerActions = (transition: Transition, nowMs: number): Transition => {
  const { decision, consequences } = transition
  if (decision.actions === undefined || isOpen(decision.status)) return transition
  if (!consequences.some((c) => c._tag === "StatusChanged")) return transition
  const applied = consequences.find((c) => c._tag === "OptionApplied")
  const event = { _tag: "DecisionResolved", appliedOptionId: applied?.optionId } as const
  const actions = decision.actions.map((action) => {
    const next = stepAction(action, event, nowMs, 0)
    return Result.isSuccess(next) ? next.success : action
  })
  return { decision: { ...decision, actions }, consequences }
}

/** The decision as it stands at `now`: expired if its time has come, otherwise unchanged. */
export const settle = (decision: Decision, nowMs: number): Transition =>
  isDue(decision, nowMs)
    ? triggerActions(expire(decision), epochMs(decision.expiresAt!))
    : { decision, consequences: [] }

const refuse = (decision: Decision, command: Command): Result.Result<Transition, Refusal> =>
  Result.fail({ _tag: "InvalidTransition", status: decision.status, command: command._tag })

const changed = (
  decision: Decision,
  next: Partial<Decision>,
  nowMs: number,
  consequences: ReadonlyArray<Consequence>
): Transition => ({
  decision: {
    ...decision,
    ...next,
    updatedAt: isoAt(Math.max(nowMs, epochMs(decision.updatedAt))),
    version: decision.version + 1
  },
  consequences
})

const statusChange = (from: DecisionStatus, to: DecisionStatus): ReadonlyArray<Consequence> =>
  from === to ? [] : [{ _tag: "StatusChanged", from, to }]

/**
 * On a decision with a quorum a choice or decline is a vote (Quorum.ts): it changes only the votes, until
 * the vote that completes the quorum resolves the decision, dated and signed by that vote, with the votes
 * that made the outcome.
 */
const vote = (
  decision: Decision,
  actor: string,
  ballot: Ballot,
  rationale: string | undefined,
  at: string,
  nowMs: number
): Transition => {
  const cast = castVote(decision.quorum!, actor, ballot, at, rationale)
  if (cast.outcome === undefined) return changed(decision, { quorum: cast.quorum }, nowMs, [])
  const optionId = ballot.kind === "chosen" ? ballot.optionId : undefined
  return changed(
    decision,
    {
      quorum: cast.quorum,
      status: "resolved",
      resolution: {
        kind: ballot.kind,
        ...(optionId === undefined ? {} : { optionId }),
        ...(rationale === undefined ? {} : { rationale }),
        decidedBy: actor,
        decidedAt: at,
        votes: cast.outcome.votes
      }
    },
    nowMs,
    [
      ...statusChange(decision.status, "resolved"),
      ...(optionId === undefined ? [] : [{ _tag: "OptionApplied", optionId } as const])
    ]
  )
}

export const step = (current: Decision, command: Command, nowMs: number): Result.Result<Transition, Refusal> =>
  Result.map(move(current, command, nowMs), (transition) =>
    command._tag === "Expire" ? transition : triggerActions(transition, Math.max(nowMs, epochMs(current.updatedAt)))
  )

const move = (current: Decision, command: Command, nowMs: number): Result.Result<Transition, Refusal> => {
  const settled = settle(current, nowMs)
  if (command._tag === "Expire") {
    return settled.decision === current ? refuse(current, command) : Result.succeed(settled)
  }
  const decision = settled.decision
  if (!isOpen(decision.status)) return refuse(decision, command)
  // The decisions contract dates everything a decider does; `updatedAt` never moves backwards.
  const at = isoAt(Math.max(nowMs, epochMs(decision.updatedAt)))

  switch (command._tag) {
    case "Choose": {
      if (!decision.options.some((o) => o.id === command.optionId)) {
        return Result.fail({ _tag: "UnknownOption", optionId: command.optionId })
      }
      if (decision.quorum !== undefined) {
        const ballot = { kind: "chosen", optionId: command.optionId } as const
        return Result.succeed(vote(decision, command.actor, ballot, command.rationale, at, nowMs))
      }
      return Result.succeed(
        changed(
          decision,
          {
            status: "resolved",
            resolution: {
              kind: "chosen",
              optionId: command.optionId,
              ...(command.rationale === undefined ? {} : { rationale: command.rationale }),
              decidedBy: command.actor,
              decidedAt: at
            }
          },
          nowMs,
          [...statusChange(decision.status, "resolved"), { _tag: "OptionApplied", optionId: command.optionId }]
        )
      )
    }
    case "Decline":
      if (decision.quorum !== undefined) {
        return Result.succeed(vote(decision, command.actor, { kind: "declined" }, command.rationale, at, nowMs))
      }
      return Result.succeed(
        changed(
          decision,
          {
            status: "resolved",
            resolution: {
              kind: "declined",
              ...(command.rationale === undefined ? {} : { rationale: command.rationale }),
              decidedBy: command.actor,
              decidedAt: at
            }
          },
          nowMs,
          statusChange(decision.status, "resolved")
        )
      )
    case "AskInfo":
      // One open question at a time: a decider asks from `pending`, the caller's answer returns it there.
      if (decision.status !== "pending") return refuse(decision, command)
      return Result.succeed(
        changed(
          decision,
          {
            status: "needs_info",
            infoRequests: [
              ...decision.infoRequests,
              { id: command.infoRequestId, question: command.question, askedBy: command.actor, askedAt: at }
            ]
          },
          nowMs,
          statusChange(decision.status, "needs_info")
        )
      )
    case "AnswerInfo": {
      if (decision.status !== "needs_info") return refuse(decision, command)
      const latest = decision.infoRequests[decision.infoRequests.length - 1]
      if (latest === undefined || latest.id !== command.infoRequestId || latest.answer !== undefined) {
        return Result.fail({ _tag: "NoOpenInfoRequest", infoRequestId: command.infoRequestId })
      }
      return Result.succeed(
        changed(
          decision,
          {
            status: "pending",
            infoRequests: [...decision.infoRequests.slice(0, -1), { ...latest, answer: command.answer, answeredAt: at }]
          },
          nowMs,
          statusChange(decision.status, "pending")
        )
      )
    }
    case "Route": {
      if (command.toRole === undefined && command.toEmail === undefined) return Result.fail({ _tag: "EmptyRoute" })
      const change: AssignmentChange = {
        actor: command.actor,
        at,
        fromRole: decision.roleSlug,
        ...(command.toRole === undefined ? {} : { toRole: command.toRole }),
        ...(command.toEmail === undefined ? {} : { toEmail: command.toEmail }),
        ...(command.note === undefined ? {} : { note: command.note })
      }
      // Routing to a role hands the decision to that role alone; routing to a member assigns them.
      const { directAssigneeEmail: _previous, ...rest } = decision
      const routed: Decision = {
        ...rest,
        roleSlug: command.toRole ?? decision.roleSlug,
        ...(command.toEmail === undefined ? {} : { directAssigneeEmail: command.toEmail }),
        assignmentHistory: [...decision.assignmentHistory, change]
      }
      return Result.succeed(changed(routed, {}, nowMs, []))
    }
    case "Cancel":
      return Result.succeed(
        changed(decision, { status: "cancelled" }, nowMs, statusChange(decision.status, "cancelled"))
      )
  }
}
