import { Result } from "effect"
import { descriptionMaxLength, titleMaxLength } from "./Task.ts"
import { parseOrigin, parsePriority, parseStatus, parseTriageStatus } from "./Values.ts"
import type { Origin, Priority, Status, TriageStatus } from "./Values.ts"

/** Field name to message, as the task inbox contract's validation answer carries them. */
export type FieldErrors = Record<string, string>

/** Collects one message per bad field, then answers the values or all the messages. */
export class Checks {
  readonly errors: FieldErrors = {}
  value<A>(field: string, result: Result.Result<A, string>): A | undefined {
    if (Result.isSuccess(result)) return result.success
    this.errors[field] = result.failure
    return undefined
  }
  fail(field: string, message: string): void {
    this.errors[field] = message
  }
  done<A>(value: () => A): Result.Result<A, FieldErrors> {
    return Object.keys(this.errors).length === 0 ? Result.succeed(value()) : Result.fail(this.errors)
  }
}

const maxLength =
  (max: number) =>
  (value: string): Result.Result<string, string> =>
    value.length <= max ? Result.succeed(value) : Result.fail(`Must be at most ${max} characters`)

export const checkTitle = (value: string): Result.Result<string, string> => {
  const title = value.trim()
  return title.length === 0 ? Result.fail("Required") : maxLength(titleMaxLength)(title)
}
export const checkDescription = maxLength(descriptionMaxLength)

const datePattern = /^(\d{4})-(\d{2})-(\d{2})$/
/** `YYYY-MM-DD`, a real calendar date. */
export const checkDate = (value: string): Result.Result<string, string> => {
  const match = datePattern.exec(value)
  if (match === null) return Result.fail("Must be a date as YYYY-MM-DD")
  const date = new Date(`${value}T00:00:00Z`)
  return Number.isFinite(date.getTime()) && date.toISOString().startsWith(value)
    ? Result.succeed(value)
    : Result.fail("Must be a date as YYYY-MM-DD")
}

export const checkHours = (value: number): Result.Result<number, string> =>
  Number.isFinite(value) && value >= 0 ? Result.succeed(value) : Result.fail("Must be a number of hours, 0 or more")

/** POST /api/tasks, as it arrives. */
export interface CreateTaskBody {
  readonly title: string
  readonly description?: string | undefined
  readonly origin?: string | undefined
  readonly originDetail?: string | undefined
  readonly assignedTo?: string | undefined
  readonly requestedBy?: string | undefined
  readonly priority?: string | undefined
  readonly project?: string | undefined
}

/** The create body's values, canonical, defaults applied (people are still as given: resolved by the use case). */
export interface CreateTaskInput {
  readonly title: string
  readonly description: string
  readonly origin: Origin
  readonly originDetail: string
  readonly priority: Priority
  readonly assignedTo: string | undefined
  readonly requestedBy: string | undefined
  readonly project: string | undefined
}

export const parseCreateTask = (body: CreateTaskBody): Result.Result<CreateTaskInput, FieldErrors> => {
  const c = new Checks()
  const title = c.value("title", checkTitle(body.title))
  const description = c.value("description", checkDescription(body.description ?? ""))
  const origin = body.origin === undefined ? "Human" : c.value("origin", parseOrigin(body.origin))
  const priority =
    body.priority === undefined ? "P2: Medium Priority" : c.value("priority", parsePriority(body.priority))
  return c.done(() => ({
    title: title!,
    description: description!,
    origin: origin!,
    originDetail: body.originDetail ?? "",
    priority: priority!,
    assignedTo: body.assignedTo,
    requestedBy: body.requestedBy,
    project: body.project
  }))
}

/** PATCH /api/tasks/{id}, as it arrives: only the fields to change; `null` clears a clearable field. */
export interface PatchTaskBody {
  readonly title?: string | null | undefined
  readonly description?: string | null | undefined
  readonly priority?: string | null | undefined
  readonly status?: string | null | undefined
  readonly triageStatus?: string | null | undefined
  readonly triageNotes?: string | null | undefined
  readonly dueDate?: string | null | undefined
  readonly startDate?: string | null | undefined
  readonly hoursEstimated?: number | null | undefined
  readonly assignedTo?: string | null | undefined
  readonly project?: string | null | undefined
  readonly originDetail?: string | null | undefined
}

/** The patch's values, canonical; `null` clears. People and the project are resolved by the use case. */
export interface TaskPatch {
  readonly title?: string
  readonly description?: string
  readonly priority?: Priority
  readonly status?: Status
  readonly triageStatus?: TriageStatus
  readonly triageNotes?: string
  readonly dueDate?: string | null
  readonly startDate?: string | null
  readonly hoursEstimated?: number | null
  readonly assignedTo?: string
  readonly project?: string | null
  readonly originDetail?: string
}

const notClearable = "Cannot be cleared"

export const parsePatchTask = (body: PatchTaskBody): Result.Result<TaskPatch, FieldErrors> => {
  const c = new Checks()
  const out: Record<string, unknown> = {}
  const required = <A>(field: keyof PatchTaskBody, check: (v: never) => Result.Result<A, string>) => {
    const value = body[field]
    if (value === undefined) return
    if (value === null) return c.fail(field, notClearable)
    const checked = c.value(field, check(value as never))
    if (checked !== undefined) out[field] = checked
  }
  const clearable = <A>(
    field: keyof PatchTaskBody,
    check: (v: never) => Result.Result<A, string>,
    cleared: unknown
  ) => {
    const value = body[field]
    if (value === undefined) return
    if (value === null) {
      out[field] = cleared
      return
    }
    const checked = c.value(field, check(value as never))
    if (checked !== undefined) out[field] = checked
  }
  required("title", checkTitle)
  clearable("description", checkDescription, "")
  required("priority", parsePriority)
  required("status", parseStatus)
  required("triageStatus", parseTriageStatus)
  clearable("triageNotes", (v: string) => Result.succeed(v), "")
  clearable("dueDate", checkDate, null)
  clearable("startDate", checkDate, null)
  clearable("hoursEstimated", checkHours, null)
  required("assignedTo", (v: string) => Result.succeed(v))
  clearable("project", (v: string) => Result.succeed(v), null)
  clearable("originDetail", (v: string) => Result.succeed(v), "")
  return c.done(() => out as TaskPatch)
}
