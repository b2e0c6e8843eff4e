import type { Fields, StoredRecord } from "./RecordStore.ts"
import {
  Origins,
  Priorities,
  Statuses,
  TriageStatuses,
  type Origin,
  type Priority,
  type Status,
  type TriageStatus
} from "./Values.ts"

/** */
export const titleMaxLength = 120
export const descriptionMaxLength = 500

/** A collaborator as answers show them: `assignedTo`, `requestedBy`. */
export interface Person {
  readonly id: string
  readonly email: string
  readonly name: string
}

/** A task as the core reads it from its record. Missing or odd upstream values read as the defaults. */
export interface TaskRecord {
  readonly id: string
  readonly createdAt: string
  readonly title: string
  readonly description: string
  readonly status: Status
  readonly priority: Priority
  readonly triageStatus: TriageStatus
  readonly origin: Origin
  readonly originDetail: string
  readonly triageNotes: string
  /** Collaborator ids (`usr…`): the first of each link field counts. */
  readonly assignedTo: string | undefined
  readonly requestedBy: string | undefined
  readonly assignedToAI: string
  readonly project: ReadonlyArray<string>
  readonly dueDate: string | null
  readonly startDate: string | null
  readonly hoursEstimated: number | null
  readonly hoursUsed: number | null
  readonly isArchived: boolean
  readonly shortCode: string | undefined
  /** When the status last became Done: the active board's 30-day rule. */
  readonly completedAt: string | undefined
  /** When the task was last resolved (Done, Cancelled or Rejected): the history list. */
  readonly resolvedAt: string | undefined
}

/** */
export interface Task {
  readonly id: string
  readonly title: string
  readonly description: string
  readonly status: Status
  readonly priority: Priority
  readonly triageStatus: TriageStatus
  readonly origin: Origin
  readonly originDetail: string
  readonly triageNotes: string
  readonly assignedTo: Person | null
  readonly requestedBy: Person | null
  readonly assignedToAI: string
  readonly project: ReadonlyArray<string>
  readonly projectName: string
  readonly dueDate: string | null
  readonly startDate: string | null
  readonly hoursEstimated: number | null
  readonly hoursUsed: number | null
  readonly isArchived: boolean
  readonly linkToTaskInterface: string
  readonly createdAt: string
}

const own = (fields: Fields, key: string): unknown => (Object.hasOwn(fields, key) ? fields[key] : undefined)
export const text = (fields: Fields, key: string): string => {
  const value = own(fields, key)
  return typeof value === "string" ? value : ""
}
export const textOrNull = (fields: Fields, key: string): string | null => {
  const value = own(fields, key)
  return typeof value === "string" && value.length > 0 ? value : null
}
export const numberOrNull = (fields: Fields, key: string): number | null => {
  const value = own(fields, key)
  return typeof value === "number" && Number.isFinite(value) ? value : null
}
export const links = (fields: Fields, key: string): ReadonlyArray<string> => {
  const value = own(fields, key)
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : []
}
const oneOf = <A extends string>(values: ReadonlyArray<A>, value: unknown, fallback: A): A =>
  values.find((v) => v === value) ?? fallback

export const readTask = (record: StoredRecord): TaskRecord => {
  const f = record.fields
  return {
    id: record.id,
    createdAt: record.createdAt,
    title: text(f, "title"),
    description: text(f, "description"),
    status: oneOf(Statuses, own(f, "status"), "Ready to Start"),
    priority: oneOf(Priorities, own(f, "priority"), "P2: Medium Priority"),
    triageStatus: oneOf(TriageStatuses, own(f, "triageStatus"), "New"),
    origin: oneOf(Origins, own(f, "origin"), "Human"),
    originDetail: text(f, "originDetail"),
    triageNotes: text(f, "triageNotes"),
    assignedTo: links(f, "assignedTo")[0],
    requestedBy: links(f, "requestedBy")[0],
    assignedToAI: text(f, "assignedToAI"),
    project: links(f, "project"),
    dueDate: textOrNull(f, "dueDate"),
    startDate: textOrNull(f, "startDate"),
    hoursEstimated: numberOrNull(f, "hoursEstimated"),
    hoursUsed: numberOrNull(f, "hoursUsed"),
    isArchived: own(f, "isArchived") === true,
    shortCode: textOrNull(f, "shortCode") ?? undefined,
    completedAt: textOrNull(f, "completedAt") ?? undefined,
    resolvedAt: textOrNull(f, "resolvedAt") ?? undefined
  }
}

/** A user is party to a task they are assigned or requested: only they see it (another user's task is 404). */
export const isParty = (task: TaskRecord, userId: string): boolean =>
  task.assignedTo === userId || task.requestedBy === userId

export const isResolved = (status: Status, triageStatus: TriageStatus): boolean =>
  status === "Done" || status === "Cancelled" || triageStatus === "Rejected"

/**
 * The fields of an update, plus the bookkeeping the lists need: `completedAt` when the status becomes Done,
 * `resolvedAt` when the task becomes resolved; both cleared when it stops being so.
 */
export const withBookkeeping = (before: TaskRecord, changes: Fields, nowIso: string): Fields => {
  const status = (Object.hasOwn(changes, "status") ? changes["status"] : before.status) as Status
  const triageStatus = (
    Object.hasOwn(changes, "triageStatus") ? changes["triageStatus"] : before.triageStatus
  ) as TriageStatus
  const extra: Record<string, string | null> = {}
  if (status === "Done" && before.status !== "Done") extra["completedAt"] = nowIso
  if (status !== "Done" && before.completedAt !== undefined) extra["completedAt"] = null
  const resolved = isResolved(status, triageStatus)
  if (resolved && !isResolved(before.status, before.triageStatus)) extra["resolvedAt"] = nowIso
  if (!resolved && before.resolvedAt !== undefined) extra["resolvedAt"] = null
  return { ...changes, ...extra }
}

/** The fields of a new task, from its validated values. */
export interface NewTask {
  readonly title: string
  readonly description: string
  readonly origin: Origin
  readonly originDetail: string
  readonly priority: Priority
  readonly assignedTo: string
  readonly requestedBy: string
  readonly project: ReadonlyArray<string>
  readonly dueDate?: string | null | undefined
}

export const newTaskFields = (task: NewTask): Fields => ({
  title: task.title,
  description: task.description,
  status: "Ready to Start",
  priority: task.priority,
  triageStatus: "New",
  origin: task.origin,
  originDetail: task.originDetail,
  triageNotes: "",
  assignedTo: [task.assignedTo],
  requestedBy: [task.requestedBy],
  assignedToAI: "",
  project: task.project,
  dueDate: task.dueDate ?? null,
  startDate: null,
  hoursEstimated: null,
  hoursUsed: null,
  isArchived: false
})

/** The answer for a task: people and the project name resolved, the link to the task's page. */
export const showTask = (
  task: TaskRecord,
  context: {
    readonly person: (id: string | undefined) => Person | null
    readonly projectName: string
    readonly link: string
  }
): Task => ({
  id: task.id,
  title: task.title,
  description: task.description,
  status: task.status,
  priority: task.priority,
  triageStatus: task.triageStatus,
  origin: task.origin,
  originDetail: task.originDetail,
  triageNotes: task.triageNotes,
  assignedTo: context.person(task.assignedTo),
  requestedBy: context.person(task.requestedBy),
  assignedToAI: task.assignedToAI,
  project: task.project,
  projectName: context.projectName,
  dueDate: task.dueDate,
  startDate: task.startDate,
  hoursEstimated: task.hoursEstimated,
  hoursUsed: task.hoursUsed,
  isArchived: task.isArchived,
  linkToTaskInterface: context.link,
  createdAt: task.createdAt
})
