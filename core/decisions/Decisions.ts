import { Clock, Context, Effect, Layer, Result } from "effect"
import { normalizeEmail } from "../kernel/Email.ts"
import { Forbidden, NotFound, ValidationError } from "../kernel/Errors.ts"
import { IdGenerator } from "../kernel/Ids.ts"
import { Decisions as L } from "../kernel/Limits.ts"
import { epochMs, isoAt } from "../kernel/Timestamp.ts"
import { stepAction } from "./ActionMachine.ts"
import { updateAction } from "./ActionUpdate.ts"
import { isOpen, type Decision, type DecisionCreate } from "./Decision.ts"
import { actionSummary, type DecisionAction, type RecordTarget } from "./DecisionAction.ts"
import { settle, step, type Command } from "./DecisionMachine.ts"
import { DecisionSignals } from "./DecisionSignals.ts"
import { makeDecisionAdmin, type CallerIdentity, type WorkspaceUser } from "./DecisionAdmin.ts"
import { makeDecisionWatches } from "./DecisionWatches.ts"
import { makeLadderFor } from "./EscalationLadder.ts"
import { createInputProblem, refusalToError } from "./DecisionRules.ts"
import { makeTransitionWebhooks } from "./TransitionWebhooks.ts"
import type { DecisionsInterface, DecisionView } from "./DecisionsInterface.ts"
import { makeDecisionLists } from "./DecisionLists.ts"
import { DecisionStore } from "./DecisionStore.ts"
import { makeDecisionWrites } from "./DecisionWrites.ts"
import { moveAttempts, newQuorum, quorumProblem } from "./Quorum.ts"
import { InvalidActionTransition, UnknownRole } from "./Errors.ts"
import { RoleStore } from "./RoleStore.ts"
import { computeRouting, mayAct, type RoleState } from "./Routing.ts"

export { requireAdmin, type CallerIdentity, type WorkspaceUser } from "./DecisionAdmin.ts"

export type { DecisionListPage, DecisionView } from "./DecisionsInterface.ts"

// How often a move is retried when another move changed the decision between our read and our write.
const maxAttempts = 8

const nowMs = Clock.currentTimeMillis

/**
 * The decisions service's use cases. Every read applies expiry (`settle`) and computes routing live;
 * every move goes through the pure machine and an optimistic write, then wakes long-polling readers.
 */
export class Decisions extends Context.Service<Decisions, DecisionsInterface>()("core/decisions/Decisions") {
  static readonly layer = Layer.effect(
    Decisions,
    Effect.suspend(() => make)
  )
}

const make = Effect.gen(function* () {
  const decisions = yield* DecisionStore
  const roles = yield* RoleStore
  const signals = yield* DecisionSignals
  const ids = yield* IdGenerator
  const writes = yield* makeDecisionWrites
  const deliveriesFor = yield* makeTransitionWebhooks
  const admin = yield* makeDecisionAdmin
  const ladderFor = yield* makeLadderFor

  /**
   * The role and its holders as the rows say in this unit of work: what a decider is checked against before a
   * move, so a holder removed a moment ago cannot act.
   */
  const roleState = Effect.fnUntraced(function* (organizationId: string, slug: string) {
    const role = yield* roles.get(organizationId, slug)
    const holders = role === undefined ? [] : (yield* roles.assignments(organizationId, slug)).map((a) => a.memberEmail)
    return { role, holders } satisfies RoleState
  })

  /**
   * A decision with its routing, for reading: the role and its holders as `getWithHolders` answers them, which
   * the SQL store keeps per instance and drops on every instance when a change of the role commits, so a read
   * of a decision is one statement while its role is unchanged (a create reads the role the same way).
   */
  const view = Effect.fnUntraced(function* (decision: Decision) {
    const state = yield* roles.getWithHolders(decision.organizationId, decision.roleSlug)
    const routing = computeRouting(decision, { role: state?.role, holders: state?.holders ?? [] })
    return { decision, routing } satisfies DecisionView
  })
  const lists = yield* makeDecisionLists(view)

  const activeRoleSlugs = (organizationId: string) =>
    Effect.map(roles.list(organizationId), (all) => all.filter((r) => r.archivedAt === undefined).map((r) => r.slug))

  const requireRole = Effect.fnUntraced(function* (organizationId: string, slug: string) {
    const role = yield* roles.get(organizationId, slug)
    if (role === undefined || role.archivedAt !== undefined) {
      return yield* new UnknownRole({ validRoles: yield* activeRoleSlugs(organizationId) })
    }
    return role
  })

  /** A decision as its reader sees it now, or NotFound for a missing one and another org's alike. */
  const current = Effect.fnUntraced(function* (organizationId: string, id: string) {
    const stored = yield* decisions.get(organizationId, id)
    if (stored === undefined) return yield* new NotFound({ message: "No such decision." })
    return settle(stored, yield* nowMs).decision
  })

  /** Applies one move with optimistic concurrency, retrying when another move got there first. */
  const move = Effect.fnUntraced(function* (
    organizationId: string,
    id: string,
    command: (decision: Decision) => Effect.Effect<Command, Forbidden | ValidationError | UnknownRole>
  ) {
    for (let attempt = 0, attempts = maxAttempts; attempt < attempts; attempt++) {
      const stored = yield* decisions.get(organizationId, id)
      if (stored === undefined) return yield* new NotFound({ message: "No such decision." })
      attempts = moveAttempts(maxAttempts, stored.quorum)
      const now = yield* nowMs
      const cmd = yield* command(settle(stored, now).decision)
      const result = step(stored, cmd, now)
      if (Result.isFailure(result)) return yield* refusalToError(result.failure)
      const next = result.success.decision
      const deliveries = yield* deliveriesFor(result.success)
      if (yield* writes.save(stored, next, deliveries)) {
        yield* signals.signal(id)
        return result.success.decision
      }
    }
    return yield* Effect.die(new Error("decision kept changing under concurrent moves"))
  })

  /**
   * Creates a decision. `actions` are the record actions of a raised template's options (the decisions contract,
   * "TemplateActionConfig"); each starts `armed`.
   */
  const create = Effect.fn("Decisions.create")(function* (
    caller: CallerIdentity,
    input: DecisionCreate,
    actions: ReadonlyArray<{ readonly optionId: string; readonly target: RecordTarget }> = [],
    templateSlug?: string | undefined
  ) {
    const now = yield* nowMs
    const problem = createInputProblem(input, now)
    if (problem !== undefined) return yield* problem
    // The role and its holders, read once for the check, the notifications and the answer's routing.
    const state = yield* roles.getWithHolders(caller.organizationId, input.roleSlug)
    if (state === undefined || state.role.archivedAt !== undefined) {
      return yield* new UnknownRole({ validRoles: yield* activeRoleSlugs(caller.organizationId) })
    }
    const tooMany = quorumProblem(input.quorum, state.holders, input.directAssigneeEmail)
    if (tooMany !== undefined) return yield* tooMany

    const escalation = yield* ladderFor(caller.organizationId, input, state.role, now)

    const options = yield* Effect.forEach(input.options, (o) =>
      Effect.map(
        o.id === undefined ? Effect.map(ids.next, (u) => `opt_${u.toLowerCase()}`) : Effect.succeed(o.id),
        (id) => ({
          ...o,
          id
        })
      )
    )
    const at = isoAt(now)
    const defaultOption = options.find((o) => o.default === true)
    const armed: Array<DecisionAction> = []
    for (const action of actions) {
      armed.push({
        id: `act_${(yield* ids.next).toLowerCase()}`,
        optionId: action.optionId,
        type: "record_update",
        summary: actionSummary(action.target),
        status: "armed",
        attempts: 0,
        target: action.target
      })
    }
    const decision: Decision = {
      id: yield* ids.next,
      organizationId: caller.organizationId,
      callerName: caller.callerName,
      roleSlug: input.roleSlug,
      status: "pending",
      title: input.title,
      ...(input.body === undefined ? {} : { body: input.body }),
      facts: input.facts ?? [],
      links: input.links ?? [],
      options,
      urgency: input.urgency ?? "normal",
      ...(input.expiresAt === undefined ? {} : { expiresAt: input.expiresAt }),
      ...(defaultOption === undefined ? {} : { defaultOptionId: defaultOption.id }),
      ...(input.directAssigneeEmail === undefined ? {} : { directAssigneeEmail: input.directAssigneeEmail }),
      infoRequests: [],
      assignmentHistory: [],
      ...(armed.length === 0 ? {} : { actions: armed }),
      ...(templateSlug === undefined ? {} : { templateSlug }),
      ...(input.quorum === undefined ? {} : { quorum: newQuorum(input.quorum) }),
      ...(escalation === undefined ? {} : { escalation }),
      createdAt: at,
      updatedAt: at,
      version: 0
    }
    // The decision and the notifications it sends, in the unit of the request (its idempotency record).
    yield* writes.insert(decision, state)
    return { decision, routing: computeRouting(decision, state) } satisfies DecisionView
  })

  const get = Effect.fn("Decisions.get")(function* (organizationId: string, id: string) {
    return yield* view(yield* current(organizationId, id))
  })

  // One watch per waited-on decision, shared by its waiters: a change is read once, not once per waiter.
  const watches = yield* makeDecisionWatches({
    subscribe: signals.subscribe,
    read: (organizationId, id) => Effect.flatMap(current(organizationId, id), view),
    statusOf: (read) => read.decision.status,
    changesAt: ({ decision }) =>
      decision.expiresAt !== undefined && isOpen(decision.status) ? epochMs(decision.expiresAt) : undefined
  })

  /**
   * Long-poll: answers as soon as the status differs from what it was when the wait began, or when the
   * wait ends, whichever is first; the wait also ends at `expiresAt` (expiry needs no signal) and when
   * `endEarly` completes (the server draining), answering the decision as it is then.
   * Waiting never changes the decision. Untraced: a span held by each of thousands of waiting requests
   * would cost more memory than the wait itself.
   */
  const waitForChange = Effect.fnUntraced(function* (
    organizationId: string,
    id: string,
    seconds: number,
    endEarly: Effect.Effect<void> = Effect.never
  ) {
    const deadline = (yield* nowMs) + Math.min(seconds, L.waitMaxSeconds) * 1000
    return yield* watches.wait(organizationId, id, deadline, endEarly)
  })

  /** The role state the actor was checked against, so the answer's routing need not read it again. */
  const requireActor = Effect.fnUntraced(function* (user: WorkspaceUser, decision: Decision) {
    const state = yield* roleState(user.organizationId, decision.roleSlug)
    if (mayAct(decision, state, user.email)) return state
    return yield* new Forbidden({ message: "Only holders of the decision's role or its assignee may act on it." })
  })

  /**
   * A decider's move that keeps the decision's role (choose, decline, ask): checked against the role state
   * read once, and answered with routing computed from that same state.
   */
  const actorMove = Effect.fnUntraced(function* (user: WorkspaceUser, id: string, command: Command) {
    let checked: RoleState | undefined
    const moved = yield* move(user.organizationId, id, (d) =>
      Effect.map(requireActor(user, d), (state) => {
        checked = state
        return command
      })
    )
    if (checked === undefined) return yield* view(moved)
    return { decision: moved, routing: computeRouting(moved, checked) } satisfies DecisionView
  })

  const choose = Effect.fn("Decisions.choose")(function* (
    user: WorkspaceUser,
    id: string,
    input: { readonly optionId: string; readonly rationale?: string | undefined }
  ) {
    return yield* actorMove(user, id, {
      _tag: "Choose",
      actor: user.email,
      optionId: input.optionId,
      rationale: input.rationale
    })
  })

  const decline = Effect.fn("Decisions.decline")(function* (
    user: WorkspaceUser,
    id: string,
    input: { readonly rationale?: string | undefined }
  ) {
    return yield* actorMove(user, id, { _tag: "Decline", actor: user.email, rationale: input.rationale })
  })

  const askInfo = Effect.fn("Decisions.askInfo")(function* (user: WorkspaceUser, id: string, question: string) {
    const infoRequestId = yield* ids.next
    return yield* actorMove(user, id, { _tag: "AskInfo", actor: user.email, infoRequestId, question })
  })

  const answerInfo = Effect.fn("Decisions.answerInfo")(function* (
    caller: CallerIdentity,
    id: string,
    input: { readonly infoRequestId: string; readonly answer: string }
  ) {
    return yield* view(
      yield* move(caller.organizationId, id, () =>
        Effect.succeed({ _tag: "AnswerInfo", infoRequestId: input.infoRequestId, answer: input.answer } as const)
      )
    )
  })

  const cancel = Effect.fn("Decisions.cancel")(function* (caller: CallerIdentity, id: string) {
    return yield* view(yield* move(caller.organizationId, id, () => Effect.succeed({ _tag: "Cancel" } as const)))
  })

  /** Admins may route any decision (that is how unrouted ones get fixed); deciders may hand theirs on. */
  const route = Effect.fn("Decisions.route")(function* (
    user: WorkspaceUser,
    id: string,
    input: {
      readonly toRole?: string | undefined
      readonly toEmail?: string | undefined
      readonly note?: string | undefined
    }
  ) {
    if (input.toRole !== undefined) yield* requireRole(user.organizationId, input.toRole)
    const toEmail = input.toEmail === undefined ? undefined : normalizeEmail(input.toEmail)
    return yield* view(
      yield* move(user.organizationId, id, (d) =>
        Effect.as(user.isAdmin ? Effect.void : requireActor(user, d), {
          _tag: "Route",
          actor: user.email,
          toRole: input.toRole,
          toEmail,
          note: input.note
        } as const)
      )
    )
  })

  /** The scheduler's sweep: persists expiry of due decisions and wakes their readers. */
  const expireDue = Effect.fn("Decisions.expireDue")(function* (batch: number = 100) {
    const now = yield* nowMs
    const due = yield* decisions.due(isoAt(now), batch)
    let expired = 0
    for (const decision of due) {
      const result = step(decision, { _tag: "Expire" }, now)
      if (!Result.isSuccess(result)) continue
      const next = result.success.decision
      // Saved with its events: the hub hears that the decision's notifications are settled.
      if (yield* writes.save(decision, next, yield* deliveriesFor(result.success))) {
        expired++
        yield* signals.signal(decision.id)
      }
    }
    return expired
  })

  /**
   * Re-queues a dead-lettered record action. Those who may act on the decision, and org admins,
   * may retry; any other status is `invalid_transition`. An unknown action is NotFound.
   */
  const retryAction = Effect.fn("Decisions.retryAction")(function* (user: WorkspaceUser, id: string, actionId: string) {
    const updated = yield* updateAction(
      decisions,
      signals,
      writes,
      { organizationId: user.organizationId, decisionId: id, actionId },
      (action, decision, now) =>
        Effect.gen(function* () {
          if (!user.isAdmin) yield* requireActor(user, settle(decision, now).decision)
          const next = stepAction(action, { _tag: "Retry" }, now, 0)
          if (Result.isFailure(next)) return yield* new InvalidActionTransition({ status: action.status })
          return next.success
        })
    )
    if (updated === undefined) return yield* new NotFound({ message: "No such decision or action." })
    return yield* view(updated.decision)
  })

  return {
    create,
    get,
    waitForChange,
    ...lists,
    choose,
    decline,
    askInfo,
    answerInfo,
    cancel,
    route,
    retryAction,
    expireDue,
    ...admin
  }
})

export type DecisionsService = Decisions["Service"]
