import { Context, Effect, Layer } from "effect"
import { Forbidden, NotFound, type UpstreamError } from "../kernel/Errors.ts"
import { ProposalNotOpen, type InvalidFields } from "./Errors.ts"
import { taskChanges, type AiStatus } from "./Proposal.ts"
import { ProposalBody, ProposalChange as ProposalChangeSchema, storedForm, type StoredChange } from "./ProposalInput.ts"
import { takeInput } from "./InputDecoding.ts"
import * as Q from "./Query.ts"
import {
  RecordStore,
  type Fields,
  type FollowingWrite,
  type GuardedUpdate,
  type RecordConflict,
  type StoredRecord
} from "./RecordStore.ts"
import { isParty, links, newTaskFields, readTask, text, withBookkeeping, type Task } from "./Task.ts"
import { isoNow, makeTaskRecords, taskNotFound, type TaskUser } from "./TaskRecords.ts"

/** A proposal as answers show it. */
export interface ProposalView {
  readonly id: string
  readonly name: string
  readonly type: string
  readonly aiStatus: AiStatus
  readonly proposedChangesObj: Readonly<Record<string, unknown>>
  readonly taskId?: string
}

/** A list item: the proposal with its task's title, its meeting and its project. */
export interface ProposalItem extends ProposalView {
  readonly taskTitle?: string
  readonly meetingData?: {
    readonly title: string
    readonly date: string
    readonly url: string
    readonly authorName: string
  }
  readonly projectData?: { readonly id: string; readonly name: string; readonly clientId: string }
}

/** An accepted proposal and the task it created or changed. */
export interface AcceptedProposal {
  readonly proposal: ProposalView
  readonly task: Task
}

type Resolve = NotFound | Forbidden | ProposalNotOpen | InvalidFields | UpstreamError

/**
 * Proposals: changes to tasks suggested (by an agent, from meetings) for their owner to accept or reject.
 * A proposal is resolved once: of callers racing on it, one wins and the others see what it became.
 */
export class Proposals extends Context.Service<
  Proposals,
  {
    /** The user's open proposals, but those whose task is closed or no longer theirs to see. */
    readonly list: (user: TaskUser) => Effect.Effect<ReadonlyArray<ProposalItem>, UpstreamError>
    readonly create: (
      user: TaskUser,
      body: ProposalBody
    ) => Effect.Effect<ProposalView, NotFound | InvalidFields | UpstreamError>
    readonly accept: (user: TaskUser, id: string) => Effect.Effect<AcceptedProposal, Resolve>
    readonly reject: (
      user: TaskUser,
      id: string,
      reason: string
    ) => Effect.Effect<ProposalView, NotFound | Forbidden | ProposalNotOpen | UpstreamError>
  }
>()("core/tasks/Proposals") {
  static readonly layer = (settings: { readonly publicUrl: string }): Layer.Layer<Proposals, never, RecordStore> =>
    Layer.effect(
      Proposals,
      Effect.suspend(() => make(settings.publicUrl))
    )
}

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

const showProposal = (p: ProposalRecord): ProposalView => ({
  id: p.id,
  name: p.name,
  type: p.type,
  aiStatus: p.aiStatus,
  proposedChangesObj: p.proposedChangesObj,
  ...(p.taskId === undefined ? {} : { taskId: p.taskId })
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

const bodyInput = takeInput(ProposalBody)
const changeInput = takeInput(ProposalChangeSchema)

/** A stored change is decoded again when it is accepted: what the store holds is not trusted to be one. */
const storedChange = (proposal: ProposalRecord) =>
  Effect.map(changeInput(proposal.proposedChangesObj, ["proposedChangesObj"]), storedForm)

const make = (publicUrl: string) =>
  Effect.gen(function* () {
    const store = yield* RecordStore
    const { resolvePerson, requireRecord, showOne, partyTask } = yield* makeTaskRecords(publicUrl)

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
      const item: ProposalItem = {
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
      return item
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

    return Proposals.of({
      list: Effect.fn("Tasks.proposals")(function* (user: TaskUser) {
        const open = yield* store.select("proposals", Q.and(Q.has("owner", user.id), Q.eq("aiStatus", "To Consider")))
        const items = yield* Effect.forEach(open, (r) => enrichProposal(user, readProposal(r)), { concurrency: 4 })
        return items.filter((item) => item !== undefined)
      }),

      create: Effect.fn("Tasks.createProposal")(function* (user: TaskUser, raw: ProposalBody) {
        const body = yield* bodyInput(raw)
        const change = storedForm(body.proposedChangesObj)
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
        // The new proposal is only answered: its row may go with the unit's end.
        const record = yield* store.createUnread("proposals", {
          name:
            body.name?.trim() || `${change.action.replace(/_/g, " ")}${task === undefined ? "" : `: ${task.title}`}`,
          type: body.type,
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

      accept: Effect.fn("Tasks.acceptProposal")(function* (user: TaskUser, id: string) {
        const proposal = yield* ownOpenProposal(user, id)
        const change: StoredChange = yield* storedChange(proposal)
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

      reject: Effect.fn("Tasks.rejectProposal")(function* (user: TaskUser, id: string, reason: string) {
        const proposal = yield* ownOpenProposal(user, id)
        const resolved = yield* store
          .updateIf(
            resolving(proposal.id, { aiStatus: "Rejected", rejectionReason: reason, resolvedAt: yield* isoNow })
          )
          .pipe(Effect.catchTag("RecordConflict", notOpen))
        if (resolved === undefined) return yield* new NotFound({ message: "Proposal not found" })
        return showProposal(readProposal(resolved))
      })
    })
  })

/** A proposal's stored change: an object, else empty (then it fails to parse on accept). */
const changeObject = (fields: Fields): Readonly<Record<string, unknown>> => {
  const value = Object.hasOwn(fields, "proposedChangesObj") ? fields["proposedChangesObj"] : undefined
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Readonly<Record<string, unknown>>)
    : {}
}
