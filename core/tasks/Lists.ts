import * as Q from "./Query.ts"
import { Priorities, type Priority, type Status } from "./Values.ts"

/** The active board drops tasks completed over 30 days ago; history looks back 30 days. */
export const boardDays = 30
export const defaultHistoryDays = 30

/** `activeOnly` search keeps the statuses a task is worked in. */
export const activeStatuses: ReadonlyArray<Status> = ["Ready to Start", "In Progress"]

const dayMs = 86_400_000
export const daysBefore = (nowMs: number, days: number): string => new Date(nowMs - days * dayMs).toISOString()

const notArchived = Q.not(Q.eq("isArchived", true))
const assignedTo = (userId: string) => Q.has("assignedTo", userId)
const requestedBy = (userId: string) => Q.has("requestedBy", userId)
/** A user sees only the tasks they are party to: assigned to them or requested by them. */
export const partyTo = (userId: string): Q.Query => Q.or(assignedTo(userId), requestedBy(userId))

/**
 * The lists of the task inbox contract, "Endpoints", each a query value every record-store adapter compiles.
 * An archived task is in no list.
 */
export const TaskLists = {
  /** GET /api/tasks: the user's untriaged tasks (triageStatus New), not archived. */
  inbox: (userId: string): Q.Query => Q.and(assignedTo(userId), Q.eq("triageStatus", "New"), notArchived),

  /**
   * GET /api/tasks/mine, the active board: assigned to the user, not Cancelled, Rejected or archived, and
   * not Done, except that a task completed in the last 30 days stays on the board (the 30-day rule).
   */
  mine: (userId: string, nowMs: number): Q.Query =>
    Q.and(
      assignedTo(userId),
      notArchived,
      Q.not(Q.eq("status", "Cancelled")),
      Q.not(Q.eq("triageStatus", "Rejected")),
      Q.or(Q.not(Q.eq("status", "Done")), Q.atLeast("completedAt", daysBefore(nowMs, boardDays)))
    ),

  /** GET /api/tasks/sent: tasks the user requested for other people. */
  sent: (userId: string): Q.Query => Q.and(requestedBy(userId), Q.not(assignedTo(userId)), notArchived),

  /**
   * GET /api/tasks/search: the user's tasks, not archived; `activeOnly` keeps the active statuses (so not
   * Done); `projectIds` (the projects of the clients named by `clientName`) keeps tasks of those projects.
   */
  search: (
    userId: string,
    options: { readonly activeOnly: boolean; readonly projectIds?: ReadonlyArray<string> | undefined }
  ): Q.Query =>
    Q.and(
      partyTo(userId),
      notArchived,
      options.activeOnly ? Q.oneOf("status", activeStatuses) : Q.all,
      options.projectIds === undefined ? Q.all : Q.or(...options.projectIds.map((id) => Q.has("project", id)))
    ),

  /** GET /api/tasks/history: the user's tasks resolved (Done, Cancelled or Rejected) in the last `days` days. */
  history: (userId: string, nowMs: number, days: number): Q.Query =>
    Q.and(
      partyTo(userId),
      notArchived,
      Q.or(Q.oneOf("status", ["Done", "Cancelled"]), Q.eq("triageStatus", "Rejected")),
      Q.atLeast("resolvedAt", daysBefore(nowMs, days))
    )
}

/**
 * The inbox's order: the most urgent first (P0 before P4), and within one priority as the store lists them
 * (newest first).
 */
export const mostUrgentFirst = <T extends { readonly priority: Priority }>(tasks: ReadonlyArray<T>): Array<T> =>
  [...tasks].sort((a, b) => Priorities.indexOf(a.priority) - Priorities.indexOf(b.priority))
