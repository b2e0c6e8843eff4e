import { Context, type Effect } from "effect"
import type { DecisionStatus } from "./Decision.ts"

/**
 * The flow of one organization's decisions over a window of whole UTC days: what was created, resolved,
 * expired and escalated each day, how long people took to decide, and what has waited longest. Read by
 * admins (core/decisions/DecisionFlow.ts); the store computes it where the decisions are (in SQL on a
 * database), never by loading every decision into the process.
 */

/**
 * Where a decision's escalations are read (`escalationTimes` in core/decisions/FlowRules.ts, and
 * `escalationEvents` in adapters/sql/decisions/FlowStatsSql.ts, the two places that say it): the steps of its
 * escalation ladder that ran and did something (`escalation[]` with `ranAt` and outcome `done`), and the
 * assignment changes made by an escalation step's route (actor `escalationActor`). A decision counts once a
 * day whichever says it, however many steps ran that day.
 */
export const escalationActor = "system:escalation"

/** A step of a decision's escalation ladder as the decision keeps it, as far as the flow reads it. */
export interface RanEscalationStep {
  readonly ranAt?: string | undefined
  readonly outcome?: string | undefined
}

/** The window: `[from, to)` as ISO instants (whole UTC days), seen at `now`, for one organization. */
export interface FlowWindow {
  readonly organizationId: string
  readonly fromIso: string
  readonly toIso: string
  readonly nowIso: string
  /** How many of the oldest waiting decisions to read. */
  readonly oldestLimit: number
}

/** One UTC day (`YYYY-MM-DD`) with anything in it. */
export interface FlowDayCount {
  readonly day: string
  /** Decisions created that day. */
  readonly created: number
  /** Decisions resolved by a person that day (chosen or declined). */
  readonly resolved: number
  /** Decisions whose expiry came that day (with or without a default option), swept yet or not. */
  readonly expired: number
  /** Decisions escalated that day (each counted once a day, however many steps ran). */
  readonly escalated: number
}

/**
 * Time to decide (from creation to a person's resolution) over the decisions resolved in the window, for
 * one role or one template: `percentile_cont` of the milliseconds (a linear interpolation between the two
 * nearest ranks).
 */
export interface DecideTime {
  readonly key: string
  readonly decided: number
  readonly medianMs: number
  readonly p90Ms: number
}

/** An open decision, as the oldest-waiting list shows it. */
export interface WaitingDecision {
  readonly id: string
  readonly title: string
  readonly roleSlug: string
  readonly status: Extract<DecisionStatus, "pending" | "needs_info">
  readonly createdAt: string
}

export interface FlowReading {
  /** Days with anything in them, oldest first; a day without any count is left out. */
  readonly days: ReadonlyArray<FlowDayCount>
  /** By the role a decision had when it was resolved, by role slug. */
  readonly byRole: ReadonlyArray<DecideTime>
  /** By the template a decision was raised from (decisions not raised from one are left out), by slug. */
  readonly byTemplate: ReadonlyArray<DecideTime>
  /** Open decisions at `now` (not past their expiry), oldest first (then by id), at most `oldestLimit`. */
  readonly oldestWaiting: ReadonlyArray<WaitingDecision>
}

/**
 * Reads the flow of one organization's decisions; nothing of another organization is ever counted.
 * Infrastructure failures are defects.
 */
export class FlowStatsStore extends Context.Service<
  FlowStatsStore,
  { readonly read: (window: FlowWindow) => Effect.Effect<FlowReading> }
>()("core/decisions/FlowStatsStore") {}
