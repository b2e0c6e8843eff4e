import { Clock, Context, Effect, Layer, Schema } from "effect"
import { NotFound, type UpstreamError } from "../kernel/Errors.ts"
import type { InvalidFields } from "./Errors.ts"
import { partyTo } from "./Lists.ts"
import * as Q from "./Query.ts"
import { RecordStore, type Fields, type StoredRecord, type Table } from "./RecordStore.ts"
import { links, numberOrNull, readTask, text, textOrNull, type Person, type Task, type TaskRecord } from "./Task.ts"
import { MeetingsWindow, ProjectPatchBody } from "./DirectoryInput.ts"
import { takeInput } from "./InputDecoding.ts"
import { OutcomesQuery, ProjectSearchTerm } from "./QueryInput.ts"
import { makeTaskRecords, toPerson, type TaskUser } from "./TaskRecords.ts"

export interface MeetingsQuery {
  readonly all: boolean
  readonly client?: string | undefined
  readonly start?: string | undefined
  readonly end?: string | undefined
}

/** A record named in a search or a picker: projects, clients. */
export interface NamedItem {
  readonly id: string
  readonly name: string
}

export interface ProjectView {
  readonly id: string
  readonly name: string
  readonly status: string
  readonly priority: string
  readonly startDate: string | null
  readonly endDate: string | null
  readonly clientId: string | null
  readonly clientName: string
  readonly accountManager: Person | null
}

/** A project with the user's tasks in it and its meetings. */
export interface ProjectDetail {
  readonly project: ProjectView
  readonly activeTasks: ReadonlyArray<Task>
  readonly completedTasks: ReadonlyArray<Task>
  readonly meetings: ReadonlyArray<MeetingView>
}

export interface OutcomeView {
  readonly id: string
  readonly name: string
  readonly status: string
  readonly description: string
  readonly projectId: string
}

/** A meeting with the names of its projects, clients and attendees. */
export interface MeetingView {
  readonly id: string
  readonly name: string
  readonly startTime: string
  readonly duration: number
  readonly link: { readonly label: string; readonly url: string }
  readonly recordingType: string
  readonly transcriptUrl: string
  readonly projects: ReadonlyArray<string>
  readonly clients: ReadonlyArray<string>
  readonly users: string
  readonly summary: string
  readonly keyProgress: string
  readonly decisionsMade: string
  readonly nextActions: string
  readonly actionable: string
}

/**
 * What tasks are filed under: projects (with their tasks and meetings), clients, outcomes, and the meetings
 * proposals come from. Every signed-in user may read them; tasks in a project are still only the user's own.
 */
export class TaskDirectory extends Context.Service<
  TaskDirectory,
  {
    /** Projects whose name contains `q` (at least 2 characters), at most 10. */
    readonly searchProjects: (
      q: string | undefined
    ) => Effect.Effect<ReadonlyArray<NamedItem>, InvalidFields | UpstreamError>
    /** The projects the user is account manager of. */
    readonly myProjects: (user: TaskUser) => Effect.Effect<ReadonlyArray<ProjectView>, UpstreamError>
    readonly project: (user: TaskUser, id: string) => Effect.Effect<ProjectDetail, NotFound | UpstreamError>
    readonly updateProject: (
      user: TaskUser,
      id: string,
      body: ProjectPatchBody
    ) => Effect.Effect<ProjectView, NotFound | InvalidFields | UpstreamError>
    readonly clients: () => Effect.Effect<ReadonlyArray<NamedItem>, UpstreamError>
    readonly searchClients: (q: string | undefined) => Effect.Effect<ReadonlyArray<NamedItem>, UpstreamError>
    readonly outcomes: (
      projectId: string | undefined
    ) => Effect.Effect<ReadonlyArray<OutcomeView>, InvalidFields | UpstreamError>
    /** Meetings since `start` (30 days back by default), the user's own unless `all`, newest first, at most 100. */
    readonly recentMeetings: (
      user: TaskUser,
      query: MeetingsQuery
    ) => Effect.Effect<ReadonlyArray<MeetingView>, InvalidFields | UpstreamError>
    /** The user's meetings still waiting for their proposals. */
    readonly pendingMeetings: (user: TaskUser) => Effect.Effect<ReadonlyArray<MeetingView>, UpstreamError>
  }
>()("core/tasks/TaskDirectory") {
  static readonly layer = (settings: { readonly publicUrl: string }): Layer.Layer<TaskDirectory, never, RecordStore> =>
    Layer.effect(
      TaskDirectory,
      Effect.suspend(() => make(settings.publicUrl))
    )
}

const patchInput = takeInput(ProjectPatchBody)
const windowInput = takeInput(MeetingsWindow)
const searchInput = takeInput(Schema.Struct({ q: ProjectSearchTerm }))
const outcomesInput = takeInput(Schema.Struct(OutcomesQuery))

const attendedOrCreated = (userId: string) => Q.or(Q.has("attendees", userId), Q.has("createdBy", userId))

const make = (publicUrl: string) =>
  Effect.gen(function* () {
    const store = yield* RecordStore
    const { resolvePerson, requireRecord, showAll } = yield* makeTaskRecords(publicUrl)

    const showProject = Effect.fn("Tasks.showProject")(function* (record: StoredRecord) {
      const clientId = links(record.fields, "client")[0]
      const client = clientId === undefined ? undefined : yield* store.get("clients", clientId)
      const managerId = links(record.fields, "accountManager")[0]
      const manager = managerId === undefined ? undefined : yield* store.get("collaborators", managerId)
      const project: ProjectView = {
        id: record.id,
        name: text(record.fields, "name"),
        status: text(record.fields, "status"),
        priority: text(record.fields, "priority"),
        startDate: textOrNull(record.fields, "startDate"),
        endDate: textOrNull(record.fields, "endDate"),
        clientId: clientId ?? null,
        clientName: client === undefined ? "" : text(client.fields, "name"),
        accountManager: manager === undefined ? null : toPerson(manager)
      }
      return project
    })

    const showMeetings = Effect.fn("Tasks.showMeetings")(function* (records: ReadonlyArray<StoredRecord>) {
      const names = new Map<string, string>()
      const nameOf = (table: Table, id: string) =>
        names.has(id)
          ? Effect.succeed(names.get(id)!)
          : Effect.map(store.get(table, id), (r) => {
              const name = r === undefined ? "" : text(r.fields, "name")
              names.set(id, name)
              return name
            })
      const namesOf = (table: Table, ids: ReadonlyArray<string>) =>
        Effect.map(
          Effect.forEach(ids, (id) => nameOf(table, id)),
          (all) => all.filter((n) => n.length > 0)
        )
      return yield* Effect.forEach(records, (r) =>
        Effect.gen(function* () {
          const f = r.fields
          const meeting: MeetingView = {
            id: r.id,
            name: text(f, "name"),
            startTime: text(f, "startTime"),
            duration: numberOrNull(f, "duration") ?? 0,
            link: { label: text(f, "linkLabel"), url: text(f, "linkUrl") },
            recordingType: text(f, "recordingType"),
            transcriptUrl: text(f, "transcriptUrl"),
            projects: yield* namesOf("projects", links(f, "projects")),
            clients: yield* namesOf("clients", links(f, "clients")),
            users: (yield* namesOf("collaborators", links(f, "attendees"))).join(", "),
            summary: text(f, "summary"),
            keyProgress: text(f, "keyProgress"),
            decisionsMade: text(f, "decisionsMade"),
            nextActions: text(f, "nextActions"),
            actionable: text(f, "actionable")
          }
          return meeting
        })
      )
    })

    /** Clients whose id is `reference`, or whose name contains it (ignoring case). */
    const clientsMatching = (reference: string) =>
      Effect.gen(function* () {
        const byId = reference.startsWith("rec") ? yield* store.get("clients", reference) : undefined
        if (byId !== undefined) return [byId.id]
        return (yield* store.select("clients", Q.contains("name", reference.trim()))).map((c) => c.id)
      })

    return TaskDirectory.of({
      searchProjects: Effect.fn("Tasks.searchProjects")(function* (q: string | undefined) {
        const { q: term } = yield* searchInput({ q: q ?? "" })
        const found = yield* store.select("projects", Q.contains("name", term), { limit: 10 })
        return found.map((p) => ({ id: p.id, name: text(p.fields, "name") }))
      }),

      myProjects: Effect.fn("Tasks.myProjects")(function* (user: TaskUser) {
        const found = yield* store.select("projects", Q.has("accountManager", user.id))
        return yield* Effect.forEach(found, showProject)
      }),

      project: Effect.fn("Tasks.project")(function* (user: TaskUser, id: string) {
        const record = yield* store.get("projects", id)
        if (record === undefined) return yield* new NotFound({ message: "Project not found" })
        const tasks = (yield* store.select(
          "tasks",
          Q.and(Q.has("project", id), partyTo(user.id), Q.not(Q.eq("isArchived", true)))
        )).map(readTask)
        const done = (t: TaskRecord) => t.status === "Done"
        const open = (t: TaskRecord) => t.status !== "Done" && t.status !== "Cancelled"
        return {
          project: yield* showProject(record),
          activeTasks: yield* showAll(tasks.filter(open)),
          completedTasks: yield* showAll(tasks.filter(done)),
          meetings: yield* showMeetings(yield* store.select("meetings", Q.has("projects", id)))
        }
      }),

      updateProject: Effect.fn("Tasks.updateProject")(function* (_user: TaskUser, id: string, body: ProjectPatchBody) {
        const patch = yield* patchInput(body)
        const record = yield* store.get("projects", id)
        if (record === undefined) return yield* new NotFound({ message: "Project not found" })
        const changes: Record<string, Fields[string]> = {}
        if (patch.status !== undefined) changes["status"] = patch.status
        if (patch.priority !== undefined) changes["priority"] = patch.priority
        if (patch.startDate !== undefined) changes["startDate"] = patch.startDate
        if (patch.endDate !== undefined) changes["endDate"] = patch.endDate
        if (patch.clientId !== undefined) {
          if (patch.clientId !== null) yield* requireRecord("clients", "clientId", patch.clientId)
          changes["client"] = patch.clientId === null ? [] : [patch.clientId]
        }
        if (patch.accountManager !== undefined) {
          changes["accountManager"] =
            patch.accountManager === null ? [] : [(yield* resolvePerson("accountManager", patch.accountManager)).id]
        }
        const updated = yield* store.update("projects", id, changes)
        if (updated === undefined) return yield* new NotFound({ message: "Project not found" })
        return yield* showProject(updated)
      }),

      clients: Effect.fn("Tasks.clients")(function* () {
        const all = yield* store.select("clients", Q.all)
        return all.map((c) => ({ id: c.id, name: text(c.fields, "name") }))
      }),

      searchClients: Effect.fn("Tasks.searchClients")(function* (q: string | undefined) {
        const term = (q ?? "").trim()
        if (term.length === 0) return []
        const found = yield* store.select("clients", Q.contains("name", term))
        return found.map((c) => ({ id: c.id, name: text(c.fields, "name") }))
      }),

      outcomes: Effect.fn("Tasks.outcomes")(function* (projectId: string | undefined) {
        const { projectId: id } = yield* outcomesInput(projectId === undefined ? {} : { projectId })
        const found = yield* store.select("outcomes", Q.has("project", id))
        return found.map((o) => ({
          id: o.id,
          name: text(o.fields, "name"),
          status: text(o.fields, "status"),
          description: text(o.fields, "description"),
          projectId: id
        }))
      }),

      recentMeetings: Effect.fn("Tasks.recentMeetings")(function* (user: TaskUser, query: MeetingsQuery) {
        const { start, end } = yield* windowInput({
          ...(query.start === undefined ? {} : { start: query.start }),
          ...(query.end === undefined ? {} : { end: query.end })
        })
        const nowMs = yield* Clock.currentTimeMillis
        const from = start ?? new Date(nowMs - 30 * 86_400_000).toISOString()
        const conditions: Array<Q.Query> = [Q.atLeast("startTime", from)]
        if (end !== undefined) conditions.push(Q.not(Q.atLeast("startTime", endExclusive(end))))
        if (!query.all) conditions.push(attendedOrCreated(user.id))
        const client = query.client?.trim()
        if (client !== undefined && client !== "") {
          const clientIds = yield* clientsMatching(client)
          conditions.push(Q.or(...clientIds.map((id) => Q.has("clients", id))))
        }
        const found = yield* store.select("meetings", Q.and(...conditions), { limit: 100 })
        const sorted = [...found].sort((a, b) => text(b.fields, "startTime").localeCompare(text(a.fields, "startTime")))
        return yield* showMeetings(sorted)
      }),

      pendingMeetings: Effect.fn("Tasks.pendingMeetings")(function* (user: TaskUser) {
        const found = yield* store.select(
          "meetings",
          Q.and(Q.eq("deepMatchStatus", "Pending"), attendedOrCreated(user.id))
        )
        return yield* showMeetings(found)
      })
    })
  })

/** `end` includes its whole day when it is a date. */
const endExclusive = (end: string): string =>
  /^\d{4}-\d{2}-\d{2}$/.test(end) ? new Date(Date.parse(`${end}T00:00:00Z`) + 86_400_000).toISOString() : end
