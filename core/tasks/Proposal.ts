import { Predicate, Result } from "effect"
import type { Fields } from "./RecordStore.ts"
import { checkDate, checkDescription, checkHours, checkTitle, Checks, type FieldErrors } from "./TaskInput.ts"
import { parsePriority, parseStatus, type Priority, type Status } from "./Values.ts"

/** Open proposals are `To Consider`; resolving one makes it Accepted or Rejected. */
export const AiStatuses = ["To Consider", "Accepted", "Rejected"] as const
export type AiStatus = (typeof AiStatuses)[number]

/** A proposed change: `proposedChangesObj`, an `action` and the fields it changes. */
export type ProposalChange =
  | {
      readonly action: "create_task"
      readonly title: string
      readonly description: string
      readonly priority: Priority
      readonly assignedTo?: string
      readonly dueDate: string | null
    }
  | { readonly action: "change_status"; readonly status: Status }
  | { readonly action: "change_priority"; readonly priority: Priority }
  | { readonly action: "reassign"; readonly assignedTo: string }
  | { readonly action: "change_due_date"; readonly dueDate: string | null }
  | { readonly action: "change_start_date"; readonly startDate: string | null }
  | { readonly action: "change_description"; readonly description: string }
  | { readonly action: "change_title"; readonly title: string }
  | { readonly action: "change_estimate"; readonly hoursEstimated: number | null }
  | { readonly action: "archive_task" }

export type ProposalAction = ProposalChange["action"]

export const ProposalActions: ReadonlyArray<ProposalAction> = [
  "create_task",
  "change_status",
  "change_priority",
  "reassign",
  "change_due_date",
  "change_start_date",
  "change_description",
  "change_title",
  "change_estimate",
  "archive_task"
]

/** Every action but `create_task` changes an existing task, so its proposal names one (`taskId`). */
export const targetsTask = (change: ProposalChange): boolean => change.action !== "create_task"

const at = (field: string) => `proposedChangesObj.${field}`
const own = (obj: Readonly<Record<string, unknown>>, key: string): unknown =>
  Object.hasOwn(obj, key) ? obj[key] : undefined

const asString = (value: unknown): Result.Result<string, string> =>
  typeof value === "string" ? Result.succeed(value) : Result.fail("Required, a string")
const dateOrNull = (value: unknown): Result.Result<string | null, string> =>
  value === null ? Result.succeed(null) : Result.flatMap(asString(value), checkDate)
const hoursOrNull = (value: unknown): Result.Result<number | null, string> =>
  value === null
    ? Result.succeed(null)
    : typeof value === "number"
      ? checkHours(value)
      : Result.fail("Must be a number")

/**
 * `proposedChangesObj` as it arrives, checked: a known `action` and the fields it needs, canonical values
 * (priority aliases become the canonical priority). Members other than those of the action are dropped.
 */
export const parseChange = (raw: unknown): Result.Result<ProposalChange, FieldErrors> => {
  const c = new Checks()
  if (!Predicate.isObject(raw) || Array.isArray(raw)) {
    c.fail("proposedChangesObj", "Must be an object with an action")
    return c.done(() => undefined as never)
  }
  const obj = raw as Readonly<Record<string, unknown>>
  const action = own(obj, "action")
  const known = ProposalActions.find((a) => a === action)
  if (known === undefined) {
    c.fail(at("action"), `Must be one of: ${ProposalActions.join(", ")}`)
    return c.done(() => undefined as never)
  }
  const field = <A>(name: string, check: (v: unknown) => Result.Result<A, string>) =>
    c.value(at(name), check(own(obj, name)))
  const optional = <A>(name: string, check: (v: unknown) => Result.Result<A, string>, otherwise: A) =>
    own(obj, name) === undefined ? otherwise : c.value(at(name), check(own(obj, name)))
  const text =
    <A>(check: (s: string) => Result.Result<A, string>) =>
    (v: unknown) =>
      Result.flatMap(asString(v), check)
  switch (known) {
    case "create_task": {
      const title = field("title", text(checkTitle))
      const description = optional("description", text(checkDescription), "")
      const priority = optional("priority", text(parsePriority), "P2: Medium Priority" as Priority)
      const assignedTo = optional("assignedTo", asString, undefined as string | undefined)
      const dueDate = optional("dueDate", dateOrNull, null)
      return c.done(() => ({
        action: known,
        title: title!,
        description: description!,
        priority: priority!,
        ...(assignedTo === undefined ? {} : { assignedTo }),
        dueDate: dueDate ?? null
      }))
    }
    case "change_status": {
      const status = field("status", text(parseStatus))
      return c.done(() => ({ action: known, status: status! }))
    }
    case "change_priority": {
      const priority = field("priority", text(parsePriority))
      return c.done(() => ({ action: known, priority: priority! }))
    }
    case "reassign": {
      const assignedTo = field("assignedTo", asString)
      return c.done(() => ({ action: known, assignedTo: assignedTo! }))
    }
    case "change_due_date": {
      const dueDate = field("dueDate", dateOrNull)
      return c.done(() => ({ action: known, dueDate: dueDate ?? null }))
    }
    case "change_start_date": {
      const startDate = field("startDate", dateOrNull)
      return c.done(() => ({ action: known, startDate: startDate ?? null }))
    }
    case "change_description": {
      const description = field("description", text(checkDescription))
      return c.done(() => ({ action: known, description: description! }))
    }
    case "change_title": {
      const title = field("title", text(checkTitle))
      return c.done(() => ({ action: known, title: title! }))
    }
    case "change_estimate": {
      const hoursEstimated = field("hoursEstimated", hoursOrNull)
      return c.done(() => ({ action: known, hoursEstimated: hoursEstimated ?? null }))
    }
    case "archive_task":
      return c.done(() => ({ action: known }))
  }
}

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
