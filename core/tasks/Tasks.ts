import { Clock, Context, Effect, Layer, Result } from "effect"
import { ProducerOutbox } from "../events/ProducerOutbox.ts"
import { hashSecret, issueSecret, secretHasPrefix, verifySecret } from "../auth/IssuedSecret.ts"
import { isEmail, normalizeEmail } from "../kernel/Email.ts"
import { Forbidden, NotFound } from "../kernel/Errors.ts"
import { IdGenerator } from "../kernel/Ids.ts"
import { Transactions } from "../kernel/Transactions.ts"
import { TaskApiKeyStore, type TaskApiKey } from "./ApiKeyStore.ts"
import { InvalidFields, ProposalNotOpen } from "./Errors.ts"
import { defaultHistoryDays, TaskLists, partyTo } from "./Lists.ts"
import type { MachineKey } from "./MachineKeys.ts"
import { parseChange, taskChanges, type AiStatus, type ProposalChange } from "./Proposal.ts"
import * as Q from "./Query.ts"
import {
  RecordStore,
  type Fields,
  type FollowingWrite,
  type GuardedUpdate,
  type RecordConflict,
  type StoredRecord,
  type Table
} from "./RecordStore.ts"
import { SessionStore } from "./SessionStore.ts"
import {
  isParty,
  links,
  newTaskFields,
  numberOrNull,
  readTask,
  showTask,
  text,
  textOrNull,
  withBookkeeping,
  type Person,
  type Task,
  type TaskRecord
} from "./Task.ts"
import {
  Checks,
  checkDate,
  parseCreateTask,
  parsePatchTask,
  type CreateTaskBody,
  type FieldErrors,
  type PatchTaskBody
} from "./TaskInput.ts"
import { defaultBulkRejectReason, Triage } from "./Triage.ts"
import { mustBeOneOf, parsePriority, parseStatus } from "./Values.ts"

/** The authenticated user: a collaborator of the record store. */
export type TaskUser = Person

export interface TasksConfig {
  /** Where the service is reached: task pages (`linkToTaskInterface`) and short links are under it. */
  readonly publicUrl: string
  readonly machineKeys: ReadonlyArray<MachineKey>
}

/** Settings; the allowed channel and frequency values are ours (not shown there). */
export const NotificationChannels = ["email", "slack", "none"] as const
export const NotificationFrequencies = ["immediate", "daily", "weekly"] as const
export interface Settings {
  readonly showSentNav: boolean
  readonly notifications: { readonly channel: string; readonly frequency: string }
}
export const defaultSettings: Settings = {
  showSentNav: true,
  notifications: { channel: "email", frequency: "immediate" }
}

export interface BulkBody {
  readonly taskIds: ReadonlyArray<string>
  readonly action: string
  readonly projectIds?: ReadonlyArray<string> | undefined
  readonly reason?: string | undefined
}

export interface ProposalBody {
  readonly taskId?: string | undefined
  readonly projectId?: string | undefined
  readonly outcomeId?: string | undefined
  readonly meetingId?: string | undefined
  readonly type: string
  readonly name?: string | undefined
  readonly proposedChangesObj: unknown
}

export interface ProjectPatchBody {
  readonly status?: string | undefined
  readonly priority?: string | undefined
  readonly startDate?: string | null | undefined
  readonly endDate?: string | null | undefined
  readonly clientId?: string | null | undefined
  readonly accountManager?: string | null | undefined
}

export interface MeetingsQuery {
  readonly all: boolean
  readonly client?: string | undefined
  readonly start?: string | undefined
  readonly end?: string | undefined
}

/** */
export const BulkActions = ["accept", "reject", "done"] as const

/** User API keys are `tsk_` and 43 characters of randomness. */
export const apiKeyPrefix = "tsk_"

/** Web session cookies are `tss_` and 43 characters of randomness; a session lasts 14 days. */
const sessionPrefix = "tss_"
export const sessionLifetimeMillis = 14 * 24 * 60 * 60 * 1000

const invalid = (fields: FieldErrors) => new InvalidFields({ fields })
const taskNotFound = () => new NotFound({ message: "Task not found" })
const isoNow = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

/**
 * The task inbox's use cases over the record-store port. Every task read or change is scoped to
 * the authenticated user: a task they are not party to is NotFound, as a missing one is.
 */
export class Tasks extends Context.Service<Tasks, Effect.Success<ReturnType<typeof make>>>()("core/tasks/Tasks") {
  static readonly layer = (config: TasksConfig) =>
    Layer.effect(
      Tasks,
      Effect.suspend(() => make(config))
    )
}

const make = (config: TasksConfig) =>
  Effect.gen(function* () {
    const store = yield* RecordStore
    const keys = yield* TaskApiKeyStore
    const sessions = yield* SessionStore
    const outbox = yield* ProducerOutbox
    const transactions = yield* Transactions
    const ids = yield* IdGenerator
    const machineKeyHashes = config.machineKeys.map((k) => ({ ...k, hash: hashSecret(k.key) }))
    const base = config.publicUrl.replace(/\/+$/, "")
    const taskLink = (id: string) => `${base}/tasks/${encodeURIComponent(id)}`

    // ---- collaborators -------------------------------------------------------------------------------------

    const toPerson = (record: StoredRecord): Person => ({
      id: record.id,
      email: text(record.fields, "email"),
      name: text(record.fields, "name")
    })

    const collaboratorByEmail = (email: string) =>
      Effect.map(store.select("collaborators", Q.eq("email", normalizeEmail(email)), { limit: 1 }), (found) =>
        found.length === 0 ? undefined : toPerson(found[0]!)
      )

    /** The collaborator with this email, created when the store has none yet (machine keys, sign-in). */
    const ensureCollaborator = Effect.fn("Tasks.ensureCollaborator")(function* (email: string, name: string) {
      const found = yield* collaboratorByEmail(email)
      if (found !== undefined) return found
      return toPerson(yield* store.create("collaborators", { email: normalizeEmail(email), name }))
    })

    /** An email or a `usr` id, as bodies name people; unknown people are a validation failure of `field`. */
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

    // ---- showing tasks ---------------------------------------------------------------------------------------

    /** Looks up every person and project the tasks name, once each. */
    const showAll = Effect.fn("Tasks.showAll")(function* (tasks: ReadonlyArray<TaskRecord>) {
      const personIds = new Set<string>()
      const projectIds = new Set<string>()
      for (const task of tasks) {
        if (task.assignedTo !== undefined) personIds.add(task.assignedTo)
        if (task.requestedBy !== undefined) personIds.add(task.requestedBy)
        if (task.project[0] !== undefined) projectIds.add(task.project[0])
      }
      const people = new Map<string, Person>()
      const projects = new Map<string, string>()
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
    const showOne = (task: TaskRecord) => Effect.map(showAll([task]), (shown) => shown[0]!)

    const listTasks = (query: Q.Query) =>
      Effect.flatMap(store.select("tasks", query), (records) => showAll(records.map(readTask)))

    /** The task, if the user is party to it; NotFound otherwise. */
    const partyTask = Effect.fn("Tasks.partyTask")(function* (user: TaskUser, id: string) {
      const record = yield* store.get("tasks", id)
      if (record === undefined) return yield* taskNotFound()
      const task = readTask(record)
      if (!isParty(task, user.id)) return yield* taskNotFound()
      return task
    })

    /** Writes changes to a task with the list bookkeeping; answers the task as stored after. */
    const changeTask = Effect.fn("Tasks.changeTask")(function* (task: TaskRecord, changes: Fields) {
      const updated = yield* store.update("tasks", task.id, withBookkeeping(task, changes, yield* isoNow))
      if (updated === undefined) return yield* taskNotFound()
      return readTask(updated)
    })

    const move = (user: TaskUser, id: string, changes: (task: TaskRecord, nowIso: string) => Fields) =>
      Effect.gen(function* () {
        const task = yield* partyTask(user, id)
        return yield* showOne(yield* changeTask(task, changes(task, yield* isoNow)))
      })

    // ---- proposals ---------------------------------------------------------------------------------------------

    const readProposal = (record: StoredRecord) => ({
      id: record.id,
      name: text(record.fields, "name"),
      type: text(record.fields, "type"),
      aiStatus: text(record.fields, "aiStatus") as AiStatus,
      proposedChangesObj: changeObject(record.fields),
      taskId: links(record.fields, "task")[0],
      projectId: links(record.fields, "project")[0],
      outcomeId: links(record.fields, "outcome")[0],
      meetingId: links(record.fields, "meeting")[0],
      ownerId: links(record.fields, "owner")[0]
    })
    type ProposalRecord = ReturnType<typeof readProposal>

    const showProposal = (p: ProposalRecord) => ({
      id: p.id,
      name: p.name,
      type: p.type,
      aiStatus: p.aiStatus,
      proposedChangesObj: p.proposedChangesObj,
      ...(p.taskId === undefined ? {} : { taskId: p.taskId })
    })

    /** A list item: the proposal with its task's title, its meeting and its project. */
    const enrichProposal = Effect.fn("Tasks.enrichProposal")(function* (user: TaskUser, p: ProposalRecord) {
      const taskRecord = p.taskId === undefined ? undefined : yield* store.get("tasks", p.taskId)
      const task = taskRecord === undefined ? undefined : readTask(taskRecord)
      // Skipped: proposals whose task is Done, Cancelled or archived, or no longer the user's to see.
      if (
        task !== undefined &&
        (task.isArchived || task.status === "Done" || task.status === "Cancelled" || !isParty(task, user.id))
      ) {
        return undefined
      }
      const meeting = p.meetingId === undefined ? undefined : yield* store.get("meetings", p.meetingId)
      const author = meeting === undefined ? undefined : links(meeting.fields, "createdBy")[0]
      const authorRecord = author === undefined ? undefined : yield* store.get("collaborators", author)
      const projectId = p.projectId ?? task?.project[0]
      const project = projectId === undefined ? undefined : yield* store.get("projects", projectId)
      return {
        ...showProposal(p),
        ...(task === undefined ? {} : { taskTitle: task.title }),
        ...(meeting === undefined
          ? {}
          : {
              meetingData: {
                title: text(meeting.fields, "name"),
                date: text(meeting.fields, "startTime"),
                url: text(meeting.fields, "linkUrl"),
                authorName: authorRecord === undefined ? "" : text(authorRecord.fields, "name")
              }
            }),
        ...(project === undefined
          ? {}
          : {
              projectData: {
                id: project.id,
                name: text(project.fields, "name"),
                clientId: links(project.fields, "client")[0] ?? ""
              }
            })
      }
    })

    /** The proposal, if it exists; 403 for someone else's, 409 once it is no longer To Consider. */
    const ownOpenProposal = Effect.fn("Tasks.ownOpenProposal")(function* (user: TaskUser, id: string) {
      const record = yield* store.get("proposals", id)
      if (record === undefined) return yield* new NotFound({ message: "Proposal not found" })
      const proposal = readProposal(record)
      if (proposal.ownerId !== user.id) {
        return yield* new Forbidden({ message: "Only the owner of a proposal may resolve it" })
      }
      if (proposal.aiStatus !== "To Consider") return yield* new ProposalNotOpen({ aiStatus: proposal.aiStatus })
      return proposal
    })

    /** Resolving a proposal is written only while it is still To Consider. */
    const resolving = (id: string, fields: Fields): GuardedUpdate => ({
      table: "proposals",
      id,
      expected: { aiStatus: "To Consider" },
      fields
    })

    /** Another caller resolved the proposal first: answered with what it became. */
    const notOpen = (conflict: RecordConflict) =>
      Effect.fail(new ProposalNotOpen({ aiStatus: text(conflict.fields as Fields, "aiStatus") }))

    const storedChange = (proposal: ProposalRecord) =>
      Result.match(parseChange(proposal.proposedChangesObj), {
        onFailure: (fields) => Effect.fail(invalid(fields)),
        onSuccess: Effect.succeed
      })

    // ---- projects, meetings ------------------------------------------------------------------------------------

    const showProject = Effect.fn("Tasks.showProject")(function* (record: StoredRecord) {
      const clientId = links(record.fields, "client")[0]
      const client = clientId === undefined ? undefined : yield* store.get("clients", clientId)
      const managerId = links(record.fields, "accountManager")[0]
      const manager = managerId === undefined ? undefined : yield* store.get("collaborators", managerId)
      return {
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
          return {
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
        })
      )
    })

    const attendedOrCreated = (userId: string) => Q.or(Q.has("attendees", userId), Q.has("createdBy", userId))

    /** Clients whose id is `reference`, or whose name contains it (ignoring case). */
    const clientsMatching = (reference: string) =>
      Effect.gen(function* () {
        const byId = reference.startsWith("rec") ? yield* store.get("clients", reference) : undefined
        if (byId !== undefined) return [byId.id]
        return (yield* store.select("clients", Q.contains("name", reference.trim()))).map((c) => c.id)
      })

    const projectsOfClients = (clientIds: ReadonlyArray<string>) =>
      clientIds.length === 0
        ? Effect.succeed([] as ReadonlyArray<string>)
        : Effect.map(store.select("projects", Q.or(...clientIds.map((id) => Q.has("client", id)))), (ps) =>
            ps.map((p) => p.id)
          )

    // ---- settings -----------------------------------------------------------------------------------------------

    const settingsRecord = (userId: string) =>
      Effect.map(store.select("settings", Q.has("user", userId), { limit: 1 }), (found) => found[0])

    const showSettings = (record: StoredRecord | undefined): Settings => {
      if (record === undefined) return defaultSettings
      const f = record.fields
      return {
        showSentNav:
          Object.hasOwn(f, "showSentNav") && typeof f["showSentNav"] === "boolean"
            ? f["showSentNav"]
            : defaultSettings.showSentNav,
        notifications: {
          channel: text(f, "notificationChannel") || defaultSettings.notifications.channel,
          frequency: text(f, "notificationFrequency") || defaultSettings.notifications.frequency
        }
      }
    }

    return {
      // ---- authentication --------------------------------------------------------------------------------------

      /** A presented X-API-Key: an operator machine key or a user key; undefined when neither. */
      authenticateKey: Effect.fn("Tasks.authenticateKey")(function* (presented: string) {
        if (presented.length === 0) return undefined
        const machine = machineKeyHashes.find((k) => verifySecret(presented, k.hash))
        if (machine !== undefined) return yield* ensureCollaborator(machine.email, machine.name)
        if (!secretHasPrefix(presented, apiKeyPrefix)) return undefined
        const key = yield* keys.findActive(hashSecret(presented))
        if (key === undefined) return undefined
        const user = yield* store.get("collaborators", key.userId)
        if (user === undefined) return undefined
        yield* keys.touch(key.id, yield* isoNow)
        return toPerson(user)
      }),

      /** A session cookie's value: the signed-in collaborator, or undefined. */
      authenticateSession: Effect.fn("Tasks.authenticateSession")(function* (cookie: string) {
        if (cookie.length === 0) return undefined
        const session = yield* sessions.find(hashSecret(cookie), yield* isoNow)
        if (session === undefined) return undefined
        return yield* ensureCollaborator(session.email, session.name)
      }),

      /**
       * Signing in (the hub vouched for this email): the collaborator with the email, created on first sign-in,
       * and a new session. Answers the cookie value; only its hash is kept.
       */
      startSession: Effect.fn("Tasks.startSession")(function* (email: string, name: string) {
        const user = yield* ensureCollaborator(email, name)
        const secret = issueSecret(sessionPrefix)
        const expiresAt = new Date((yield* Clock.currentTimeMillis) + sessionLifetimeMillis).toISOString()
        yield* sessions.create({ hash: secret.hash, email: user.email, name: user.name, expiresAt })
        return { cookie: secret.plaintext, user, expiresAt }
      }),
      endSession: Effect.fn("Tasks.endSession")(function* (cookie: string) {
        if (cookie.length > 0) yield* sessions.remove(hashSecret(cookie))
      }),

      createApiKey: Effect.fn("Tasks.createApiKey")(function* (user: TaskUser, name: string) {
        const trimmed = name.trim()
        if (trimmed.length === 0 || trimmed.length > 100) {
          return yield* invalid({ name: "Required, at most 100 characters" })
        }
        const secret = issueSecret(apiKeyPrefix)
        const apiKey: TaskApiKey = {
          id: yield* ids.next,
          name: trimmed,
          keyPrefix: secret.displayPrefix,
          createdAt: yield* isoNow,
          lastUsedAt: null
        }
        yield* keys.create({ ...apiKey, userId: user.id, hash: secret.hash, revokedAt: null })
        return { apiKey, key: secret.plaintext }
      }),
      listApiKeys: (user: TaskUser) => keys.list(user.id),
      revokeApiKey: Effect.fn("Tasks.revokeApiKey")(function* (user: TaskUser, id: string) {
        const revoked = yield* keys.revoke(user.id, id, yield* isoNow)
        if (!revoked) return yield* new NotFound({ message: "API key not found" })
      }),

      // ---- task lists ------------------------------------------------------------------------------------------

      inbox: (user: TaskUser) => listTasks(TaskLists.inbox(user.id)),
      mine: (user: TaskUser) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => listTasks(TaskLists.mine(user.id, now))),
      sent: (user: TaskUser) => listTasks(TaskLists.sent(user.id)),
      search: Effect.fn("Tasks.search")(function* (
        user: TaskUser,
        options: { readonly activeOnly: boolean; readonly clientName?: string | undefined }
      ) {
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
        const d = days ?? defaultHistoryDays
        if (!Number.isInteger(d) || d < 1 || d > 3650)
          return yield* invalid({ days: "Must be a whole number from 1 to 3650" })
        return yield* listTasks(TaskLists.history(user.id, yield* Clock.currentTimeMillis, d))
      }),

      // ---- one task --------------------------------------------------------------------------------------------

      get: (user: TaskUser, id: string) => Effect.flatMap(partyTask(user, id), showOne),

      create: Effect.fn("Tasks.create")(function* (user: TaskUser, body: CreateTaskBody) {
        const input = parseCreateTask(body)
        if (Result.isFailure(input)) return yield* invalid(input.failure)
        const v = input.success
        const assignee = v.assignedTo === undefined ? user : yield* resolvePerson("assignedTo", v.assignedTo)
        const requester = v.requestedBy === undefined ? user : yield* resolvePerson("requestedBy", v.requestedBy)
        if (v.project !== undefined) yield* requireRecord("projects", "project", v.project)
        const record = yield* store.create(
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
        return yield* showOne(readTask(record))
      }),

      update: Effect.fn("Tasks.update")(function* (user: TaskUser, id: string, body: PatchTaskBody) {
        const task = yield* partyTask(user, id)
        const parsed = parsePatchTask(body)
        if (Result.isFailure(parsed)) return yield* invalid(parsed.failure)
        const { assignedTo, project, ...rest } = parsed.success
        const changes: Record<string, Fields[string]> = { ...rest }
        if (assignedTo !== undefined) changes["assignedTo"] = [(yield* resolvePerson("assignedTo", assignedTo)).id]
        if (project !== undefined) {
          if (project !== null) yield* requireRecord("projects", "project", project)
          changes["project"] = project === null ? [] : [project]
        }
        return yield* showOne(yield* changeTask(task, changes))
      }),

      accept: Effect.fn("Tasks.accept")(function* (
        user: TaskUser,
        id: string,
        body: { readonly projectId: string; readonly status?: string | undefined }
      ) {
        const task = yield* partyTask(user, id)
        const c = new Checks()
        const status = body.status === undefined ? undefined : c.value("status", parseStatus(body.status))
        if (Object.keys(c.errors).length > 0) return yield* invalid(c.errors)
        yield* requireRecord("projects", "projectId", body.projectId)
        return yield* showOne(yield* changeTask(task, Triage.accept(body.projectId, status)))
      }),

      reject: (user: TaskUser, id: string, reason: string) =>
        move(user, id, (task, now) => Triage.reject(task, user, reason, now)),
      needsInfo: (user: TaskUser, id: string, note: string) =>
        move(user, id, (task, now) => Triage.needsInfo(task, user, note, now)),
      archive: (user: TaskUser, id: string) => move(user, id, Triage.archive),

      delegate: Effect.fn("Tasks.delegate")(function* (
        user: TaskUser,
        id: string,
        body: { readonly assignedTo: string; readonly reason?: string | undefined }
      ) {
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

      /** GET /s/{code}: where the short link leads. The code is the capability; no credential needed. */
      resolveShortCode: Effect.fn("Tasks.resolveShortCode")(function* (code: string) {
        const found = yield* store.select("tasks", Q.eq("shortCode", code), { limit: 1 })
        if (found.length === 0) return yield* new NotFound({ message: "Short link not found" })
        return taskLink(found[0]!.id)
      }),

      bulk: Effect.fn("Tasks.bulk")(function* (user: TaskUser, body: BulkBody) {
        const action = BulkActions.find((a) => a === body.action.trim().toLowerCase())
        if (action === undefined) return yield* invalid({ action: mustBeOneOf(BulkActions) })
        const projectId = body.projectIds?.[0]
        if (action === "accept") {
          if (projectId === undefined)
            return yield* invalid({ projectIds: "Required for accept: at least one project id" })
          yield* requireRecord("projects", "projectIds", projectId)
        }
        const successful: Array<string> = []
        const ids = [...new Set(body.taskIds)]
        for (const id of ids) {
          const outcome = yield* Effect.result(
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
          )
          if (Result.isSuccess(outcome)) successful.push(id)
          else if (outcome.failure._tag === "UpstreamError") return yield* outcome.failure
        }
        return { ok: true as const, successful, failedCount: ids.length - successful.length }
      }),

      // ---- proposals ---------------------------------------------------------------------------------------------

      proposals: Effect.fn("Tasks.proposals")(function* (user: TaskUser) {
        const open = yield* store.select("proposals", Q.and(Q.has("owner", user.id), Q.eq("aiStatus", "To Consider")))
        const items = yield* Effect.forEach(open, (r) => enrichProposal(user, readProposal(r)), { concurrency: 4 })
        return items.filter((item) => item !== undefined)
      }),

      createProposal: Effect.fn("Tasks.createProposal")(function* (user: TaskUser, body: ProposalBody) {
        const c = new Checks()
        if (body.taskId === undefined && body.projectId === undefined && body.outcomeId === undefined) {
          c.fail("taskId", "At least one of taskId, projectId, outcomeId is required")
        }
        if (body.type.trim().length === 0) c.fail("type", "Required")
        const parsed = parseChange(body.proposedChangesObj)
        if (Result.isFailure(parsed)) Object.assign(c.errors, parsed.failure)
        else if (parsed.success.action !== "create_task" && body.taskId === undefined) {
          c.fail("taskId", `Required for ${parsed.success.action}`)
        }
        if (Object.keys(c.errors).length > 0 || Result.isFailure(parsed)) return yield* invalid(c.errors)
        const change = parsed.success
        const task = body.taskId === undefined ? undefined : yield* partyTask(user, body.taskId)
        if (body.projectId !== undefined) yield* requireRecord("projects", "projectId", body.projectId)
        if (body.outcomeId !== undefined) yield* requireRecord("outcomes", "outcomeId", body.outcomeId)
        if (body.meetingId !== undefined) yield* requireRecord("meetings", "meetingId", body.meetingId)
        if (change.action === "reassign") yield* resolvePerson("proposedChangesObj.assignedTo", change.assignedTo)
        if (change.action === "create_task" && change.assignedTo !== undefined) {
          yield* resolvePerson("proposedChangesObj.assignedTo", change.assignedTo)
        }
        // The task owner resolves a proposal about their task; otherwise its author.
        const owner = task?.assignedTo ?? task?.requestedBy ?? user.id
        const link = (id: string | undefined) => (id === undefined ? [] : [id])
        const record = yield* store.create("proposals", {
          name:
            body.name?.trim() || `${change.action.replace(/_/g, " ")}${task === undefined ? "" : `: ${task.title}`}`,
          type: body.type.trim(),
          aiStatus: "To Consider",
          proposedChangesObj: change as unknown as Fields[string],
          task: link(body.taskId),
          project: link(body.projectId),
          outcome: link(body.outcomeId),
          meeting: link(body.meetingId),
          owner: [owner],
          author: [user.id]
        })
        return showProposal(readProposal(record))
      }),

      acceptProposal: Effect.fn("Tasks.acceptProposal")(function* (user: TaskUser, id: string) {
        const proposal = yield* ownOpenProposal(user, id)
        const change: ProposalChange = yield* storedChange(proposal)
        const now = yield* isoNow
        let then: FollowingWrite
        if (change.action === "create_task") {
          const assignee =
            change.assignedTo === undefined
              ? user
              : yield* resolvePerson("proposedChangesObj.assignedTo", change.assignedTo)
          const target = proposal.taskId === undefined ? undefined : yield* store.get("tasks", proposal.taskId)
          const projectId = proposal.projectId ?? (target === undefined ? undefined : readTask(target).project[0])
          then = {
            _tag: "Create",
            table: "tasks",
            // The created task links back to its proposal (`proposal`): one accepted proposal, one task.
            linkedBy: "proposal",
            fields: newTaskFields({
              title: change.title,
              description: change.description,
              origin: "AI Agent",
              originDetail: `Proposal ${proposal.id}`,
              priority: change.priority,
              assignedTo: assignee.id,
              requestedBy: user.id,
              project: projectId === undefined ? [] : [projectId],
              dueDate: change.dueDate
            })
          }
        } else {
          // The owner may have handed the task on since: a task they are no longer party to is NotFound.
          const target = yield* partyTask(user, proposal.taskId ?? "")
          const assignee =
            change.action === "reassign"
              ? (yield* resolvePerson("proposedChangesObj.assignedTo", change.assignedTo)).id
              : undefined
          then = {
            _tag: "Update",
            table: "tasks",
            id: target.id,
            fields: withBookkeeping(target, taskChanges(change, assignee), now)
          }
        }
        // The proposal becomes Accepted and its task is created or changed in one write, made only while the
        // proposal is still To Consider: of callers racing on it, one wins and the others see what it became.
        const written = yield* store
          .updateIfAndWrite(resolving(proposal.id, { aiStatus: "Accepted", resolvedAt: now }), then)
          .pipe(Effect.catchTag("RecordConflict", notOpen))
        if (written === undefined) {
          return yield* then._tag === "Update" ? taskNotFound() : new NotFound({ message: "Proposal not found" })
        }
        return {
          proposal: showProposal(readProposal(written.updated)),
          task: yield* showOne(readTask(written.written))
        }
      }),

      rejectProposal: Effect.fn("Tasks.rejectProposal")(function* (user: TaskUser, id: string, reason: string) {
        const proposal = yield* ownOpenProposal(user, id)
        const resolved = yield* store
          .updateIf(
            resolving(proposal.id, { aiStatus: "Rejected", rejectionReason: reason, resolvedAt: yield* isoNow })
          )
          .pipe(Effect.catchTag("RecordConflict", notOpen))
        if (resolved === undefined) return yield* new NotFound({ message: "Proposal not found" })
        return showProposal(readProposal(resolved))
      }),

      // ---- projects, clients, outcomes -------------------------------------------------------------------------

      searchProjects: Effect.fn("Tasks.searchProjects")(function* (q: string | undefined) {
        const term = (q ?? "").trim()
        if (term.length < 2) return yield* invalid({ q: "Must be at least 2 characters" })
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
        const record = yield* store.get("projects", id)
        if (record === undefined) return yield* new NotFound({ message: "Project not found" })
        const c = new Checks()
        const changes: Record<string, Fields[string]> = {}
        if (body.status !== undefined) {
          const status = body.status.trim()
          if (status.length === 0 || status.length > 50) c.fail("status", "Required, at most 50 characters")
          else changes["status"] = status
        }
        if (body.priority !== undefined) {
          const priority = c.value("priority", parsePriority(body.priority))
          if (priority !== undefined) changes["priority"] = priority
        }
        for (const field of ["startDate", "endDate"] as const) {
          const value = body[field]
          if (value === null) changes[field] = null
          else if (value !== undefined) {
            const date = c.value(field, checkDate(value))
            if (date !== undefined) changes[field] = date
          }
        }
        if (Object.keys(c.errors).length > 0) return yield* invalid(c.errors)
        if (body.clientId !== undefined) {
          if (body.clientId !== null) yield* requireRecord("clients", "clientId", body.clientId)
          changes["client"] = body.clientId === null ? [] : [body.clientId]
        }
        if (body.accountManager !== undefined) {
          changes["accountManager"] =
            body.accountManager === null ? [] : [(yield* resolvePerson("accountManager", body.accountManager)).id]
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
        if (projectId === undefined || projectId.trim() === "") return yield* invalid({ projectId: "Required" })
        const found = yield* store.select("outcomes", Q.has("project", projectId))
        return found.map((o) => ({
          id: o.id,
          name: text(o.fields, "name"),
          status: text(o.fields, "status"),
          description: text(o.fields, "description"),
          projectId
        }))
      }),

      // ---- meetings ------------------------------------------------------------------------------------------------

      recentMeetings: Effect.fn("Tasks.recentMeetings")(function* (user: TaskUser, query: MeetingsQuery) {
        const c = new Checks()
        const start = query.start === undefined ? undefined : c.value("start", checkIsoDate(query.start))
        const end = query.end === undefined ? undefined : c.value("end", checkIsoDate(query.end))
        if (Object.keys(c.errors).length > 0) return yield* invalid(c.errors)
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
      }),

      // ---- settings --------------------------------------------------------------------------------------------------

      settings: (user: TaskUser) => Effect.map(settingsRecord(user.id), showSettings),

      updateSettings: Effect.fn("Tasks.updateSettings")(function* (
        user: TaskUser,
        body: {
          readonly showSentNav?: boolean | undefined
          readonly notifications?: { readonly channel?: string | undefined; readonly frequency?: string | undefined }
        }
      ) {
        const c = new Checks()
        const changes: Record<string, Fields[string]> = {}
        if (body.showSentNav !== undefined) changes["showSentNav"] = body.showSentNav
        const channel = body.notifications?.channel
        if (channel !== undefined) {
          const found = NotificationChannels.find((v) => v === channel.trim().toLowerCase())
          if (found === undefined) c.fail("notifications.channel", mustBeOneOf(NotificationChannels))
          else changes["notificationChannel"] = found
        }
        const frequency = body.notifications?.frequency
        if (frequency !== undefined) {
          const found = NotificationFrequencies.find((v) => v === frequency.trim().toLowerCase())
          if (found === undefined) c.fail("notifications.frequency", mustBeOneOf(NotificationFrequencies))
          else changes["notificationFrequency"] = found
        }
        if (Object.keys(c.errors).length > 0) return yield* invalid(c.errors)
        const existing = yield* settingsRecord(user.id)
        const saved =
          existing === undefined
            ? yield* store.create("settings", { user: [user.id], ...changes })
            : yield* store.update("settings", existing.id, changes)
        return showSettings(saved)
      })
    }
  })

/** A proposal's stored change: an object, else empty (then it fails to parse on accept). */
const changeObject = (fields: Fields): Readonly<Record<string, unknown>> => {
  const value = Object.hasOwn(fields, "proposedChangesObj") ? fields["proposedChangesObj"] : undefined
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Readonly<Record<string, unknown>>)
    : {}
}

/** A date (`YYYY-MM-DD`) or a date-time, as the meeting filters take them; answers its ISO text. */
const checkIsoDate = (value: string): Result.Result<string, string> => {
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return checkDate(value)
  const ms = Date.parse(value)
  return /^\d{4}-\d{2}-\d{2}T/.test(value) && Number.isFinite(ms)
    ? Result.succeed(new Date(ms).toISOString())
    : Result.fail("Must be an ISO date (YYYY-MM-DD) or date-time")
}

/** `end` includes its whole day when it is a date. */
const endExclusive = (end: string): string =>
  /^\d{4}-\d{2}-\d{2}$/.test(end) ? new Date(Date.parse(`${end}T00:00:00Z`) + 86_400_000).toISOString() : end
