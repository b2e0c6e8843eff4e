import { Clock, Effect } from "effect"
import { epochMs, isoAt } from "../kernel/Timestamp.ts"
import type { Decision } from "./Decision.ts"
import type { DecisionAction } from "./DecisionAction.ts"
import type { DecisionSignals } from "./DecisionSignals.ts"
import type { DecisionStore } from "./DecisionStore.ts"
import type { DecisionWrites } from "./DecisionWrites.ts"

// How often a write is retried when another write changed the decision between our read and our write.
const maxAttempts = 8

/**
 * Changes one record action of a decision with optimistic concurrency, retrying when another write got
 * there first, and wakes the decision's readers. The save and the notifications it implies (a dead-lettered
 * action tells the organization's admins) are one unit of work (DecisionWrites.ts). `change` sees the action,
 * its decision as stored and the time; it answers the action's next state, or undefined to leave it alone.
 * Answers the saved decision and action, or undefined when the decision or action is missing (or `change`
 * declined).
 */
export const updateAction = Effect.fnUntraced(function* <E, R>(
  store: DecisionStore["Service"],
  signals: DecisionSignals["Service"],
  writes: DecisionWrites,
  target: { readonly organizationId: string; readonly decisionId: string; readonly actionId: string },
  change: (action: DecisionAction, decision: Decision, nowMs: number) => Effect.Effect<DecisionAction | undefined, E, R>
) {
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    const stored = yield* store.get(target.organizationId, target.decisionId)
    const action = stored?.actions?.find((a) => a.id === target.actionId)
    if (stored === undefined || action === undefined) return undefined
    const now = yield* Clock.currentTimeMillis
    const next = yield* change(action, stored, now)
    if (next === undefined) return undefined
    const saved: Decision = {
      ...stored,
      actions: stored.actions!.map((a) => (a.id === target.actionId ? next : a)),
      updatedAt: isoAt(Math.max(now, epochMs(stored.updatedAt))),
      version: stored.version + 1
    }
    if (yield* writes.save(stored, saved)) {
      yield* signals.signal(target.decisionId)
      return { decision: saved, action: next }
    }
  }
  return yield* Effect.die(new Error("decision kept changing under concurrent writes"))
})
