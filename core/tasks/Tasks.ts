import { Clock, Context, Effect, Layer, Result, Schema } from "effect"
import { ProducerOutbox } from "../events/ProducerOutbox.ts"
import { NotFound, type UpstreamError } from "../kernel/Errors.ts"
import { IdGenerator } from "../kernel/Ids.ts"
import { Transactions } from "../kernel/Transactions.ts"
import type { InvalidFields } from "./Errors.ts"
import { defaultHistoryDays, mostUrgentFirst, TaskLists } from "./Lists.ts"
import * as Q from "./Query.ts"
import { RecordStore, type Fields } from "./RecordStore.ts"
import { newTaskFields, readTask, text, type Task, type TaskRecord } from "./Task.ts"
import { takeInput } from "./InputDecoding.ts"
import { HistoryDays } from "./QueryInput.ts"
import { CreateTaskBody, createDefaults, PatchTaskBody } from "./TaskInput.ts"
import { isoNow, makeTaskRecords, taskLinks, type TaskUser } from "./TaskRecords.ts"
import { defaultBulkRejectReason, Triage } from "./Triage.ts"
import { AcceptTaskBody, BulkTriageBody, type DelegateTaskBody } from "./TriageInput.ts"

export type { TaskUser } from "./TaskRecords.ts"

export interface TasksSettings {
  /** Where the service is reached: task pages (`linkToTaskInterface`) and short links are under it. */
  readonly publicUrl: string
}

/** Which tasks a bulk action changed; the others were not the user's, or gone. */
export interface BulkResult {
  readonly ok: true
  readonly successful: ReadonlyArray<string>
  readonly failedCount: number
}

export interface TaskShortLink {
  readonly shortCode: string
  readonly shortUrl: string
  readonly linkToTaskInterface: string
}

export interface SearchOptions {
  readonly activeOnly: boolean
  readonly clientName?: string | undefined
}

type Failure = UpstreamError
type Lookup = NotFound | UpstreamError
type Change = NotFound | InvalidFields | UpstreamError

/**
 * The task inbox's tasks: the lists, one task and its triage, delegation, short links and bulk triage, over
 * the record-store port. Every task read or change is scoped to the authenticated user: a task they are not
 * party to is NotFound, as a missing one is.
 *
 * Bodies are taken as they arrive (`CreateTaskBody`, ...): a value the body's schema decoded (as the HTTP
 * contract's) is used as it is, anything else is decoded with that schema first (core/tasks/InputDecoding.ts).
 */
export class Tasks extends Context.Service<
  Tasks,
  {
    readonly inbox: (user: TaskUser) => Effect.Effect<ReadonlyArray<Task>, Failure>
    readonly mine: (user: TaskUser) => Effect.Effect<ReadonlyArray<Task>, Failure>
    readonly sent: (user: TaskUser) => Effect.Effect<ReadonlyArray<Task>, Failure>
    readonly search: (user: TaskUser, options: SearchOptions) => Effect.Effect<ReadonlyArray<Task>, Failure>
    readonly history: (
      user: TaskUser,
      days: number | undefined
    ) => Effect.Effect<ReadonlyArray<Task>, InvalidFields | Failure>
    readonly get: (user: TaskUser, id: string) => Effect.Effect<Task, Lookup>
    readonly create: (user: TaskUser, body: CreateTaskBody) => Effect.Effect<Task, InvalidFields | Failure>
    readonly update: (user: TaskUser, id: string, body: PatchTaskBody) => Effect.Effect<Task, Change>
    readonly accept: (user: TaskUser, id: string, body: AcceptTaskBody) => Effect.Effect<Task, Change>
    readonly reject: (user: TaskUser, id: string, reason: string) => Effect.Effect<Task, Lookup>
    readonly needsInfo: (user: TaskUser, id: string, note: string) => Effect.Effect<Task, Lookup>
    readonly archive: (user: TaskUser, id: string) => Effect.Effect<Task, Lookup>
    /** Hands the task to another collaborator, who is notified through the hub's feed. */
    readonly delegate: (user: TaskUser, id: string, body: DelegateTaskBody) => Effect.Effect<Task, Change>
    /** The task's short link, made on first request. */
    readonly shortlink: (user: TaskUser, id: string) => Effect.Effect<TaskShortLink, Lookup>
    /** GET /s/{code}: where the short link leads. The code is the capability; no credential needed. */
    readonly resolveShortCode: (code: string) => Effect.Effect<string, Lookup>
    readonly bulk: (user: TaskUser, body: BulkTriageBody) => Effect.Effect<BulkResult, InvalidFields | Failure>
  }
>()("core/tasks/Tasks") {
  static readonly layer = (
    settings: TasksSettings
  ): Layer.Layer<Tasks, never, RecordStore | ProducerOutbox | Transactions | IdGenerator> =>
    Layer.effect(
      Tasks,
      Effect.suspend(() => make(settings))
    )
}

const createInput = takeInput(CreateTaskBody)
const patchInput = takeInput(PatchTaskBody)
const acceptInput = takeInput(AcceptTaskBody)
const bulkInput = takeInput(BulkTriageBody)
const daysInput = takeInput(Schema.Struct({ days: HistoryDays }))

const make = (settings: TasksSettings) =>
  Effect.gen(function* () {
    const store = yield* RecordStore
    const outbox = yield* ProducerOutbox
    const transactions = yield* Transactions
    const ids = yield* IdGenerator
    const { base, taskLink } = taskLinks(settings.publicUrl)
    const { resolvePerson, requireRecord, showOne, listTasks, partyTask, changeTask } = yield* makeTaskRecords(
      settings.publicUrl
    )

    const move = (user: TaskUser, id: string, changes: (task: TaskRecord, nowIso: string) => Fields) =>
      Effect.gen(function* () {
        const task = yield* partyTask(user, id)
        return yield* showOne(yield* changeTask(task, changes(task, yield* isoNow)))
      })

    const projectsOfClients = (clientIds: ReadonlyArray<string>) =>
      clientIds.length === 0
        ? Effect.succeed([] as ReadonlyArray<string>)
        : Effect.map(store.select("projects", Q.or(...clientIds.map((id) => Q.has("client", id)))), (ps) =>
            ps.map((p) => p.id)
          )

    return Tasks.of({
      // ---- task lists ------------------------------------------------------------------------------------------

      inbox: (user: TaskUser) => Effect.map(listTasks(TaskLists.inbox(user.id)), mostUrgentFirst),
      mine: (user: TaskUser) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => listTasks(TaskLists.mine(user.id, now))),
      sent: (user: TaskUser) => listTasks(TaskLists.sent(user.id)),
      search: Effect.fn("Tasks.search")(function* (user: TaskUser, options: SearchOptions) {
        const clientName = options.clientName?.trim()
        const projectIds =
          clientName === undefined || clientName === ""
            ? undefined
            : yield* projectsOfClients(
                (yield* store.select("clients", Q.contains("name", clientName))).map((c) => c.id)
              )
        return yield* listTasks(TaskLists.search(user.id, { activeOnly: options.activeOnly, projectIds }))
      }),
      history: Effect.fn("Tasks.history")(function* (user: TaskUser, days: number | undefined) {
        const d = days === undefined ? defaultHistoryDays : (yield* daysInput({ days })).days
        return yield* listTasks(TaskLists.history(user.id, yield* Clock.currentTimeMillis, d))
      }),

      // ---- one task --------------------------------------------------------------------------------------------

      get: (user: TaskUser, id: string) => Effect.flatMap(partyTask(user, id), showOne),

      create: Effect.fnUntraced(function* (user: TaskUser, body: CreateTaskBody) {
        const v = { ...createDefaults, ...(yield* createInput(body)) }
        const assignee = v.assignedTo === undefined ? user : yield* resolvePerson("assignedTo", v.assignedTo)
        const requester = v.requestedBy === undefined ? user : yield* resolvePerson("requestedBy", v.requestedBy)
        const project = v.project === undefined ? undefined : yield* requireRecord("projects", "project", v.project)
        // The new task is only answered: its row may go with the unit's end.
        const record = yield* store.createUnread(
          "tasks",
          newTaskFields({
            title: v.title,
            description: v.description,
            origin: v.origin,
            originDetail: v.originDetail,
            priority: v.priority,
            assignedTo: assignee.id,
            requestedBy: requester.id,
            project: v.project === undefined ? [] : [v.project]
          })
        )
        // The people and the project were read in this request: the answer shows them without reading again.
        return yield* showOne(readTask(record), {
          people: [assignee, requester],
          projects: project === undefined ? [] : [{ id: project.id, name: text(project.fields, "name") }]
        })
      }),

      update: Effect.fn("Tasks.update")(function* (user: TaskUser, id: string, body: PatchTaskBody) {
        const patch = yield* patchInput(body)
        const task = yield* partyTask(user, id)
        const { assignedTo, project, ...rest } = patch
        const changes: Record<string, Fields[string]> = { ...rest }
        if (assignedTo !== undefined) changes["assignedTo"] = [(yield* resolvePerson("assignedTo", assignedTo)).id]
        if (project !== undefined) {
          if (project !== null) yield* requireRecord("projects", "project", project)
          changes["project"] = project === null ? [] : [project]
        }
        return yield* showOne(yield* changeTask(task, changes))
      }),

      accept: Effect.fn("Tasks.accept")(function* (user: TaskUser, id: string, body: AcceptTaskBody) {
        const { projectId, status } = yield* acceptInput(body)
        const task = yield* partyTask(user, id)
        yield* requireRecord("projects", "projectId", projectId)
        return yield* showOne(yield* changeTask(task, Triage.accept(projectId, status)))
      }),

      reject: (user: TaskUser, id: string, reason: string) =>
        move(user, id, (task, now) => Triage.reject(task, user, reason, now)),
      needsInfo: (user: TaskUser, id: string, note: string) =>
        move(user, id, (task, now) => Triage.needsInfo(task, user, note, now)),
      archive: (user: TaskUser, id: string) => move(user, id, Triage.archive),

      delegate: Effect.fn("Tasks.delegate")(function* (user: TaskUser, id: string, body: DelegateTaskBody) {
        const task = yield* partyTask(user, id)
        const to = yield* resolvePerson("assignedTo", body.assignedTo)
        const now = yield* isoNow
        // The new assignee is notified through the hub's feed. The change and its event are one unit of work:
        // on a record store in the service's own database they commit together, so a crash between them
        // cannot keep one without the other (docs/notifications.md, "What services emit").
        return yield* transactions
          .atomically(
            Effect.gen(function* () {
              const delegated = yield* changeTask(task, Triage.delegate(task, user, to, body.reason, now))
              yield* outbox.enqueue({
                id: yield* ids.next,
                type: "tasks.notification.created",
                service: "tasks",
                occurredAt: now,
                subject: { email: to.email },
                data: {
                  kind: "task_delegated",
                  taskId: task.id,
                  title: delegated.title,
                  from: { email: user.email, name: user.name },
                  ...(body.reason === undefined || body.reason === "" ? {} : { reason: body.reason }),
                  link: taskLink(task.id)
                },
                contractVersion: "v1"
              })
              return delegated
            })
          )
          .pipe(Effect.flatMap(showOne))
      }),

      shortlink: Effect.fn("Tasks.shortlink")(function* (user: TaskUser, id: string) {
        let task = yield* partyTask(user, id)
        if (task.shortCode === undefined) {
          let code = ""
          do {
            code = (yield* ids.next).slice(-8).toLowerCase()
          } while ((yield* store.select("tasks", Q.eq("shortCode", code), { limit: 1 })).length > 0)
          task = yield* changeTask(task, { shortCode: code })
        }
        return {
          shortCode: task.shortCode!,
          shortUrl: `${base}/s/${task.shortCode!}`,
          linkToTaskInterface: taskLink(task.id)
        }
      }),

      resolveShortCode: Effect.fn("Tasks.resolveShortCode")(function* (code: string) {
        const found = yield* store.select("tasks", Q.eq("shortCode", code), { limit: 1 })
        if (found.length === 0) return yield* new NotFound({ message: "Short link not found" })
        return taskLink(found[0]!.id)
      }),

      bulk: Effect.fn("Tasks.bulk")(function* (user: TaskUser, raw: BulkTriageBody) {
        const body = yield* bulkInput(raw)
        const action = body.action
        // The schema requires a project for accept.
        const projectId = body.projectIds?.[0]
        if (action === "accept") yield* requireRecord("projects", "projectIds", projectId!)
        const successful: Array<string> = []
        const ids = [...new Set(body.taskIds)]
        // Ten tasks at a time: a store that gathers writes made together (an upstream taking 10 records a
        // request) then reads and writes each ten in one request.
        const outcomes = yield* Effect.forEach(
          ids,
          (id) =>
            Effect.result(
              Effect.gen(function* () {
                const task = yield* partyTask(user, id)
                const now = yield* isoNow
                const changes =
                  action === "accept"
                    ? Triage.accept(projectId!, undefined)
                    : action === "reject"
                      ? Triage.reject(task, user, body.reason ?? defaultBulkRejectReason, now)
                      : Triage.done()
                yield* changeTask(task, changes)
              })
            ),
          { concurrency: 10 }
        )
        for (const [i, outcome] of outcomes.entries()) {
          if (Result.isSuccess(outcome)) successful.push(ids[i]!)
          else if (outcome.failure._tag === "UpstreamError") return yield* outcome.failure
        }
        return { ok: true as const, successful, failedCount: ids.length - successful.length }
      })
    })
  })
