import { Schema } from "effect"
import { epochMs } from "../kernel/Timestamp.ts"
import { ActionStatus } from "./ActionMachine.ts"

/**
 * What a decision shows of its record actions. Field names, never
 * values: the target record and the values written stay inside the service.
 */
export const DecisionActionView = Schema.Struct({
  id: Schema.String,
  optionId: Schema.String,
  type: Schema.Literal("record_update"),
  summary: Schema.String,
  status: Schema.Literals(ActionStatus),
  attempts: Schema.Int,
  lastError: Schema.optionalKey(Schema.String),
  triggeredAt: Schema.optionalKey(Schema.String),
  completedAt: Schema.optionalKey(Schema.String),
  nextAttemptAt: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "DecisionActionView" })
export type DecisionActionView = typeof DecisionActionView.Type

/**
 * The record store's ids: `rec`, `app` and `tbl` followed by 14 letters or digits. Nothing else may become a
 * segment of a record store path: a `.` or `..` would move the request to another resource.
 */
export const isRecordId = (id: string): boolean => /^rec[a-zA-Z0-9]{14}$/.test(id)
export const isBaseId = (id: string): boolean => /^app[a-zA-Z0-9]{14}$/.test(id)
export const isTableId = (id: string): boolean => /^tbl[a-zA-Z0-9]{14}$/.test(id)

/**
 * The record a `record_update` action writes: params are filled in when the template is raised;
 * `{{resolvedBy}}` and `{{resolvedAt}}` stay until the action runs, when the resolution is known.
 */
export const RecordTarget = Schema.Struct({
  baseId: Schema.String,
  tableId: Schema.String,
  recordId: Schema.String,
  fields: Schema.Record(Schema.String, Schema.String)
})
export type RecordTarget = typeof RecordTarget.Type

/**
 * An action as a decision stores it: its view, the target, and `leaseUntil` while a worker performs it
 * (another worker leaves it alone until then; a worker that crashed mid-call frees it when it passes).
 */
export const DecisionAction = Schema.Struct({
  ...DecisionActionView.fields,
  target: RecordTarget,
  leaseUntil: Schema.optionalKey(Schema.String)
})
export type DecisionAction = typeof DecisionAction.Type

export const actionView = ({ target: _target, leaseUntil: _lease, ...view }: DecisionAction): DecisionActionView => view

/**
 * "Update Approved by, Status on a record of tblXXXXXXXXXXXXXX": the field names (sorted, so every store
 * answers the same whatever order it keeps object keys in) and the table, no values.
 */
export const actionSummary = (target: Pick<RecordTarget, "tableId" | "fields">): string => {
  const names = Object.keys(target.fields).sort()
  const shown = names.length > 4 ? `${names.slice(0, 4).join(", ")} and ${names.length - 4} more` : names.join(", ")
  return `Update ${shown} on a record of ${target.tableId}`.slice(0, 200)
}

/**
 * When a worker may run the action: a queued action at once (from its trigger), a retrying one at its
 * `nextAttemptAt`, and neither while another worker's lease on it lasts. Other statuses never.
 */
export const actionDueAt = (action: DecisionAction): number | undefined => {
  const lease = action.leaseUntil === undefined ? 0 : epochMs(action.leaseUntil)
  switch (action.status) {
    case "queued":
      return Math.max(action.triggeredAt === undefined ? 0 : epochMs(action.triggeredAt), lease)
    case "retrying":
      return Math.max(action.nextAttemptAt === undefined ? 0 : epochMs(action.nextAttemptAt), lease)
    default:
      return undefined
  }
}

/** The earliest moment any of a decision's actions may run (undefined: none will). */
export const actionsDueAt = (actions: ReadonlyArray<DecisionAction> | undefined): number | undefined => {
  let earliest: number | undefined
  for (const action of actions ?? []) {
    const at = actionDueAt(action)
    if (at !== undefined && (earliest === undefined || at < earliest)) earliest = at
  }
  return earliest
}

export const hasWaitingAction = (actions: ReadonlyArray<DecisionAction> | undefined): boolean =>
  (actions ?? []).some((a) => a.status === "waiting_for_setup")
