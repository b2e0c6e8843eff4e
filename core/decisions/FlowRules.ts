import { epochMs } from "../kernel/Timestamp.ts"
import { isOpen, type Decision } from "./Decision.ts"
import {
  escalationActor,
  type DecideTime,
  type FlowDayCount,
  type FlowReading,
  type FlowWindow,
  type RanEscalationStep,
  type WaitingDecision
} from "./FlowStats.ts"

/**
 * The flow of decisions computed from the decisions themselves: what the memory store answers, with the same
 * definitions as the SQL store's queries (adapters/sql/decisions/FlowStatsSql.ts).
 */

/** The UTC day (`YYYY-MM-DD`) of an instant. */
export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10)

/**
 * The `p` percentile of ascending values as Postgres's `percentile_cont` computes it: the two values around
 * rank `p * (n - 1)`, interpolated linearly (the same floating-point steps, so both answer the same number).
 */
export const percentileCont = (ascending: ReadonlyArray<number>, p: number): number => {
  const rank = p * (ascending.length - 1)
  const first = Math.floor(rank)
  const second = Math.ceil(rank)
  const lo = ascending[first]!
  if (first === second) return lo
  const hi = ascending[second]!
  return lo + (hi - lo) * (rank - first)
}

/**
 * When the decision was escalated: the steps of its ladder that ran and did something, and the routes made by
 * an escalation step (core/decisions/FlowStats.ts, `escalationActor`).
 */
export const escalationTimes = (decision: Decision): ReadonlyArray<string> => {
  const ladder = (decision as { readonly escalation?: ReadonlyArray<RanEscalationStep> | undefined }).escalation ?? []
  return [
    ...ladder.flatMap((step) => (step.ranAt !== undefined && step.outcome === "done" ? [step.ranAt] : [])),
    ...decision.assignmentHistory.filter((change) => change.actor === escalationActor).map((change) => change.at)
  ]
}

/** When its expiry came, if it has come by `nowMs`: written down by the sweep, or still to be. */
const expiredAt = (decision: Decision, nowMs: number): number | undefined => {
  if (decision.status === "expired") {
    return epochMs(decision.resolution?.decidedAt ?? decision.expiresAt ?? "")
  }
  if (isOpen(decision.status) && decision.expiresAt !== undefined) {
    const at = epochMs(decision.expiresAt)
    return at <= nowMs ? at : undefined
  }
  return undefined
}

const decideTimes = (groups: Map<string, Array<number>>): ReadonlyArray<DecideTime> =>
  [...groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, values]) => {
      const ascending = [...values].sort((a, b) => a - b)
      return {
        key,
        decided: ascending.length,
        medianMs: percentileCont(ascending, 0.5),
        p90Ms: percentileCont(ascending, 0.9)
      }
    })

/** The flow of the window from every decision of its organization (others are ignored). */
export const flowOf = (decisions: ReadonlyArray<Decision>, window: FlowWindow): FlowReading => {
  const from = epochMs(window.fromIso)
  const to = epochMs(window.toIso)
  const now = epochMs(window.nowIso)
  const inWindow = (ms: number) => ms >= from && ms < to
  const mine = decisions.filter((d) => d.organizationId === window.organizationId)

  const days = new Map<string, { created: number; resolved: number; expired: number; escalated: Set<string> }>()
  const dayOf = (ms: number) => {
    const day = utcDay(ms)
    let found = days.get(day)
    if (found === undefined) {
      found = { created: 0, resolved: 0, expired: 0, escalated: new Set() }
      days.set(day, found)
    }
    return found
  }
  const byRole = new Map<string, Array<number>>()
  const byTemplate = new Map<string, Array<number>>()
  const add = (groups: Map<string, Array<number>>, key: string, value: number) => {
    const list = groups.get(key)
    if (list === undefined) groups.set(key, [value])
    else list.push(value)
  }

  for (const decision of mine) {
    const created = epochMs(decision.createdAt)
    if (inWindow(created)) dayOf(created).created += 1
    if (decision.status === "resolved" && decision.resolution !== undefined) {
      const decided = epochMs(decision.resolution.decidedAt)
      if (inWindow(decided)) {
        dayOf(decided).resolved += 1
        add(byRole, decision.roleSlug, decided - created)
        if (decision.templateSlug !== undefined) add(byTemplate, decision.templateSlug, decided - created)
      }
    }
    const expired = expiredAt(decision, now)
    if (expired !== undefined && inWindow(expired)) dayOf(expired).expired += 1
    for (const at of escalationTimes(decision)) {
      const ms = epochMs(at)
      if (inWindow(ms)) dayOf(ms).escalated.add(decision.id)
    }
  }

  const oldestWaiting: ReadonlyArray<WaitingDecision> = mine
    .filter((d) => isOpen(d.status) && expiredAt(d, now) === undefined)
    .sort((a, b) => epochMs(a.createdAt) - epochMs(b.createdAt) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, window.oldestLimit)
    .map((d) => ({
      id: d.id,
      title: d.title,
      roleSlug: d.roleSlug,
      status: d.status === "needs_info" ? "needs_info" : "pending",
      createdAt: d.createdAt
    }))

  return {
    days: [...days.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([day, c]): FlowDayCount => ({
        day,
        created: c.created,
        resolved: c.resolved,
        expired: c.expired,
        escalated: c.escalated.size
      })),
    byRole: decideTimes(byRole),
    byTemplate: decideTimes(byTemplate),
    oldestWaiting
  }
}
