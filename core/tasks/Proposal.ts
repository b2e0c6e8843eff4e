import type { ProposalChange } from "./ProposalInput.ts"
import type { Fields } from "./RecordStore.ts"

/** Open proposals are `To Consider`; resolving one makes it Accepted or Rejected. */
export const AiStatuses = ["To Consider", "Accepted", "Rejected"] as const
export type AiStatus = (typeof AiStatuses)[number]

export type { ProposalChange } from "./ProposalInput.ts"

/**
 * The fields of the target task an accepted change sets: exactly the change, nothing else. `assigneeId`
 * is the collaborator `reassign` names, resolved by the use case.
 */
export const taskChanges = (
  change: Exclude<ProposalChange, { readonly action: "create_task" }>,
  assigneeId: string | undefined
): Fields => {
  switch (change.action) {
    case "change_status":
      return { status: change.status }
    case "change_priority":
      return { priority: change.priority }
    case "reassign":
      return { assignedTo: assigneeId === undefined ? [] : [assigneeId] }
    case "change_due_date":
      return { dueDate: change.dueDate }
    case "change_start_date":
      return { startDate: change.startDate }
    case "change_description":
      return { description: change.description }
    case "change_title":
      return { title: change.title }
    case "change_estimate":
      return { hoursEstimated: change.hoursEstimated }
    case "archive_task":
      return { isArchived: true }
  }
}
