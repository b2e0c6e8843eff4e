import type { DecisionStatus, Urgency } from "../Decision.ts"
import type { ActionStatus } from "../ActionMachine.ts"

/** How the pages name statuses and other values: words for people, never the wire spelling. */
export const statusLabel = (status: DecisionStatus): string => {
  switch (status) {
    case "pending":
      return "Pending"
    case "needs_info":
      return "Needs info"
    case "resolved":
      return "Resolved"
    case "expired":
      return "Expired"
    case "cancelled":
      return "Cancelled"
  }
}

export const urgencyLabel = (urgency: Urgency): string => (urgency === "urgent" ? "Urgent" : "Normal")

export const actionStatusLabel = (status: ActionStatus): string =>
  status.charAt(0).toUpperCase() + status.slice(1).replace(/_/g, " ")

/** A timestamp as the pages show it: the ISO date and minute in UTC, e.g. `2025-05-01 14:03 UTC`. */
export const timeLabel = (iso: string): string => {
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(iso)
  return match === null ? iso : `${match[1]} ${match[2]} UTC`
}
