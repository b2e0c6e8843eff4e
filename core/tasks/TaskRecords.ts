import { Clock, Effect } from "effect"
import { isEmail, normalizeEmail } from "../kernel/Email.ts"
import { NotFound, type UpstreamError } from "../kernel/Errors.ts"
import { InvalidFields } from "./Errors.ts"
import * as Q from "./Query.ts"
import { RecordStore, type Fields, type StoredRecord, type Table } from "./RecordStore.ts"
import { isParty, readTask, showTask, text, withBookkeeping, type Person, type Task, type TaskRecord } from "./Task.ts"
import type { FieldErrors } from "./InputDecoding.ts"

/** The authenticated user: a collaborator of the record store. */
export type TaskUser = Person

export const invalid = (fields: FieldErrors) => new InvalidFields({ fields })
export const taskNotFound = () => new NotFound({ message: "Task not found" })
export const isoNow = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

/** The address of a task's page, under the service's public address. */
export const taskLinks = (publicUrl: string) => {
  const base = publicUrl.replace(/\/+$/, "")
  return { base, taskLink: (id: string) => `${base}/tasks/${encodeURIComponent(id)}` }
}

export const toPerson = (record: StoredRecord): Person => ({
  id: record.id,
  email: text(record.fields, "email"),
  name: text(record.fields, "name")
})

/** Collaborators and the records a body names, as the task inbox's use cases look them up. */
export interface Collaborators {
  /** The collaborator with this email, created when the store has none yet (machine keys, sign-in). */
  readonly ensureCollaborator: (email: string, name: string) => Effect.Effect<Person, UpstreamError>
  /** An email or a `usr` id, as bodies name people; unknown people are a validation failure of `field`. */
  readonly resolvePerson: (field: string, reference: string) => Effect.Effect<Person, InvalidFields | UpstreamError>
  /** The record a body names by id; a missing one is a validation failure of `field`. */
  readonly requireRecord: (
    table: Table,
    field: string,
    id: string
  ) => Effect.Effect<StoredRecord, InvalidFields | UpstreamError>
}

/**
 * The reads and writes the task inbox's use cases share over the record store: collaborators, the records a
 * body names, and tasks as the user may see and change them. Not a service of its own: each use case builds
 * it over the same `RecordStore`.
 */
export interface TaskRecords extends Collaborators {
  /**
   * Tasks as answers show them, every person and project they name looked up once; those the caller has
   * just read (`known`) are not looked up again.
   */
  readonly showAll: (
    tasks: ReadonlyArray<TaskRecord>,
    known?: KnownRecords | undefined
  ) => Effect.Effect<ReadonlyArray<Task>, UpstreamError>
  readonly showOne: (task: TaskRecord, known?: KnownRecords | undefined) => Effect.Effect<Task, UpstreamError>
  readonly listTasks: (query: Q.Query) => Effect.Effect<ReadonlyArray<Task>, UpstreamError>
  /** The task, if the user is party to it; NotFound otherwise. */
  readonly partyTask: (user: TaskUser, id: string) => Effect.Effect<TaskRecord, NotFound | UpstreamError>
  /** Writes changes to a task with the list bookkeeping; answers the task as stored after. */
  readonly changeTask: (task: TaskRecord, changes: Fields) => Effect.Effect<TaskRecord, NotFound | UpstreamError>
}

/** People and projects (by id, with their name) a use case has read already in this request. */
export interface KnownRecords {
  readonly people?: ReadonlyArray<Person> | undefined
  readonly projects?: ReadonlyArray<{ readonly id: string; readonly name: string }> | undefined
}

export const makeCollaborators: Effect.Effect<Collaborators, never, RecordStore> = Effect.gen(function* () {
  const store = yield* RecordStore

  const collaboratorByEmail = (email: string) =>
    Effect.map(store.select("collaborators", Q.eq("email", normalizeEmail(email)), { limit: 1 }), (found) =>
      found.length === 0 ? undefined : toPerson(found[0]!)
    )

  const ensureCollaborator = Effect.fn("Tasks.ensureCollaborator")(function* (email: string, name: string) {
    const found = yield* collaboratorByEmail(email)
    if (found !== undefined) return found
    return toPerson(yield* store.create("collaborators", { email: normalizeEmail(email), name }))
  })

  const resolvePerson = Effect.fn("Tasks.resolvePerson")(function* (field: string, reference: string) {
    const ref = reference.trim()
    const found = ref.startsWith("usr")
      ? Effect.map(store.get("collaborators", ref), (r) => (r === undefined ? undefined : toPerson(r)))
      : isEmail(normalizeEmail(ref))
        ? collaboratorByEmail(ref)
        : Effect.succeed(undefined)
    const person = yield* found
    if (person === undefined) return yield* invalid({ [field]: "Must be the email or usr id of a collaborator" })
    return person
  })

  const requireRecord = Effect.fn("Tasks.requireRecord")(function* (table: Table, field: string, id: string) {
    const record = yield* store.get(table, id)
    if (record === undefined) return yield* invalid({ [field]: `No ${table.slice(0, -1)} with this id` })
    return record
  })

  return { ensureCollaborator, resolvePerson, requireRecord }
})

export const makeTaskRecords = (publicUrl: string): Effect.Effect<TaskRecords, never, RecordStore> =>
  Effect.gen(function* () {
    const store = yield* RecordStore
    const collaborators = yield* makeCollaborators
    const { taskLink } = taskLinks(publicUrl)

    const showAll = Effect.fnUntraced(function* (tasks: ReadonlyArray<TaskRecord>, known?: KnownRecords) {
      const people = new Map<string, Person>()
      const projects = new Map<string, string>()
      for (const person of known?.people ?? []) people.set(person.id, person)
      for (const project of known?.projects ?? []) projects.set(project.id, project.name)
      const personIds = new Set<string>()
      const projectIds = new Set<string>()
      for (const task of tasks) {
        if (task.assignedTo !== undefined && !people.has(task.assignedTo)) personIds.add(task.assignedTo)
        if (task.requestedBy !== undefined && !people.has(task.requestedBy)) personIds.add(task.requestedBy)
        if (task.project[0] !== undefined && !projects.has(task.project[0])) projectIds.add(task.project[0])
      }
      yield* Effect.forEach(
        personIds,
        (id) => Effect.map(store.get("collaborators", id), (r) => void (r && people.set(id, toPerson(r)))),
        { concurrency: 4, discard: true }
      )
      yield* Effect.forEach(
        projectIds,
        (id) => Effect.map(store.get("projects", id), (r) => void (r && projects.set(id, text(r.fields, "name")))),
        { concurrency: 4, discard: true }
      )
      return tasks.map((task): Task =>
        showTask(task, {
          person: (id) => (id === undefined ? null : (people.get(id) ?? null)),
          projectName: task.project[0] === undefined ? "" : (projects.get(task.project[0]) ?? ""),
          link: taskLink(task.id)
        })
      )
    })
    const showOne = (task: TaskRecord, known?: KnownRecords) => Effect.map(showAll([task], known), (shown) => shown[0]!)

    const listTasks = (query: Q.Query) =>
      Effect.flatMap(store.select("tasks", query), (records) => showAll(records.map(readTask)))

    const partyTask = Effect.fn("Tasks.partyTask")(function* (user: TaskUser, id: string) {
      const record = yield* store.get("tasks", id)
      if (record === undefined) return yield* taskNotFound()
      const task = readTask(record)
      if (!isParty(task, user.id)) return yield* taskNotFound()
      return task
    })

    const changeTask = Effect.fn("Tasks.changeTask")(function* (task: TaskRecord, changes: Fields) {
      const updated = yield* store.update("tasks", task.id, withBookkeeping(task, changes, yield* isoNow))
      if (updated === undefined) return yield* taskNotFound()
      return readTask(updated)
    })

    return { ...collaborators, showAll, showOne, listTasks, partyTask, changeTask }
  })
