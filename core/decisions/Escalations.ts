import { Clock, Context, Effect, Layer, Result } from "effect"
import { ProducerOutbox } from "../events/ProducerOutbox.ts"
import { IdGenerator } from "../kernel/Ids.ts"
import { isoAt } from "../kernel/Timestamp.ts"
import { Transactions } from "../kernel/Transactions.ts"
import type { Decision } from "./Decision.ts"
import { decisionNotifications, unroutedBody } from "./DecisionNotifications.ts"
import { makeDecisionWrites } from "./DecisionWrites.ts"
import { makeAnswerLinks } from "./AnswerLinks.ts"
import { DecisionSignals } from "./DecisionSignals.ts"
import { DecisionStore } from "./DecisionStore.ts"
import { publicDecision } from "./DecisionView.ts"
import { escalate, nextStepIndex, type Escalated } from "./Escalation.ts"
import { OrganizationAdmins } from "./OrganizationAdmins.ts"
import { RoleStore } from "./RoleStore.ts"
import type { WebhookDelivery } from "./WebhookOutbox.ts"
import { WebhookStore } from "./WebhookStore.ts"

/** The webhook event type of a step that ran. */
export const escalatedType = "decision.escalated"

/**
 * The escalation worker. Each pass runs due steps one at a time, each in a unit of work of its own: the
 * decision is claimed (held until the unit ends, passed over by other instances' claims, so no two run a
 * step), the step's effect, its `ranAt` mark, its notifications and its webhook deliveries are written together,
 * so a crash at any instant leaves the step either wholly done or not begun, and it runs exactly once.
 *
 * - `remind`: the current deciders (the role's active holders and the direct assignee) are told again, on the
 *   path of the first ask (a `decision_assigned` notification, key `escalation-<n>`); nobody to tell: the
 *   admins hear that nobody can act on it, as on creation.
 * - `route`: the machine's route move by `system:escalation` (docs: the routing history); its new deciders are
 *   told as for any route. A target role archived or removed since is passed over (`outcome: skipped`).
 * - `notify_admins`: the organization's admins get a `decision_escalated` notification.
 */
export class Escalations extends Context.Service<
  Escalations,
  {
    /** Runs due steps, at most `batch` (20 by default), the longest-waiting first; answers how many ran. */
    readonly runDue: (batch?: number | undefined) => Effect.Effect<number>
  }
>()("core/decisions/Escalations") {
  static readonly layer = Layer.effect(
    Escalations,
    Effect.suspend(() => make)
  )
}

const waited = (seconds: number) =>
  seconds % 3600 === 0 ? `${seconds / 3600} h` : seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds} s`

const make = Effect.gen(function* () {
  const store = yield* DecisionStore
  const roles = yield* RoleStore
  const admins = yield* OrganizationAdmins
  const outbox = yield* ProducerOutbox
  const webhooks = yield* WebhookStore
  const transactions = yield* Transactions
  const signals = yield* DecisionSignals
  const ids = yield* IdGenerator
  const writes = yield* makeDecisionWrites
  const { withAnswerLinks } = yield* makeAnswerLinks

  /** One `decision.escalated` delivery per active endpoint of the organization. */
  const deliveries = Effect.fnUntraced(function* ({ decision, index, step }: Escalated) {
    const endpoints = (yield* webhooks.list(decision.organizationId)).filter((w) => w.disabledAt === undefined)
    const createdAt = isoAt(yield* Clock.currentTimeMillis)
    const escalation = { step: index, after: step.after, action: step.action, outcome: step.outcome }
    const data = { decision: publicDecision(decision, { actions: true }), escalation }
    const out: Array<WebhookDelivery> = []
    for (const endpoint of endpoints) {
      const id = yield* ids.next
      out.push({
        id,
        organizationId: decision.organizationId,
        webhookId: endpoint.id,
        decisionId: decision.id,
        eventType: escalatedType,
        payload: JSON.stringify({ id, type: escalatedType, occurredAt: step.ranAt, data }),
        status: "pending",
        attempts: 0,
        nextAttemptAt: createdAt,
        createdAt
      })
    }
    return out
  })

  /** The notifications of a remind or notify_admins step (a route's are the notifier's, as for any route). */
  const tell = Effect.fnUntraced(function* ({ decision, index, step }: Escalated) {
    const at = step.ranAt!
    const key = `escalation-${index}`
    if (step.action === "remind") {
      const state = yield* roles.getWithHolders(decision.organizationId, decision.roleSlug)
      const holders = state === undefined || state.role.archivedAt !== undefined ? [] : state.holders
      const deciders = [
        ...holders,
        ...(decision.directAssigneeEmail === undefined ? [] : [decision.directAssigneeEmail])
      ]
      return deciders.length > 0
        ? decisionNotifications(decision, at, {
            kind: "decision_assigned",
            key,
            emails: deciders,
            body: `Reminder: ${decision.callerName} is still waiting for your decision (asked ${waited(step.after)} ago).`
          })
        : decisionNotifications(decision, at, {
            kind: "decision_unrouted",
            key,
            emails: yield* admins.list(decision.organizationId),
            body: unroutedBody
          })
    }
    if (step.action === "notify_admins") {
      return decisionNotifications(decision, at, {
        kind: "decision_escalated",
        key,
        emails: yield* admins.list(decision.organizationId),
        body: `Nobody has answered this decision from ${decision.callerName} in ${waited(step.after)}.`
      })
    }
    return []
  })

  /** Whether a route step's role is gone (archived or removed) since the ladder was set. */
  const routeTargetGone = Effect.fnUntraced(function* (decision: Decision) {
    const index = nextStepIndex(decision)
    const pending = index === undefined ? undefined : decision.escalation?.[index]
    if (pending?.action !== "route" || pending.toRole === undefined) return false
    const role = yield* roles.get(decision.organizationId, pending.toRole)
    return role === undefined || role.archivedAt !== undefined
  })

  /** Claims one due decision and runs its next step, all in one unit of work; answers whether a step ran. */
  const runOne = transactions.atomically(
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const stored = yield* store.claimEscalation(isoAt(now))
      if (stored === undefined) return false
      const result = escalate(stored, now, { routeTargetGone: yield* routeTargetGone(stored) })
      if (Result.isFailure(result)) return false
      const escalated = result.success
      const saved = yield* writes.save(stored, escalated.decision, yield* deliveries(escalated))
      if (!saved) return false
      const told = yield* withAnswerLinks(escalated.decision, yield* tell(escalated))
      yield* Effect.forEach(told, outbox.enqueue, { discard: true })
      yield* transactions.afterCommit(signals.signal(stored.id))
      return true
    })
  )

  const runDue = Effect.fn("Escalations.runDue")(function* (batch: number = 20) {
    let ran = 0
    while (ran < batch && (yield* runOne)) ran++
    return ran
  })

  return Escalations.of({ runDue })
})
