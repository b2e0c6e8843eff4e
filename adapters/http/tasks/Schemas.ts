import { Schema } from "effect"
import { HttpApiSchema } from "effect/http-api"
import { Origins, Priorities, Statuses, TriageStatuses } from "../../../core/tasks/Values.ts"

// The bodies and query parameters are the core's input schemas (core/tasks/*Input.ts): the contract decodes them, with the task
// inbox's own messages, and the use cases take what it decoded. A decode failure is answered by the router's
// error middleware in the task inbox's dialect (TasksErrors.ts): 400 `{error: "Validation failed", fields}`.
export { CreateTaskBody, PatchTaskBody } from "../../../core/tasks/TaskInput.ts"
export {
  AcceptTaskBody as AcceptBody,
  BulkTriageBody as BulkBody,
  DelegateTaskBody as DelegateBody,
  NeedsInfoBody,
  RejectTaskBody as RejectBody
} from "../../../core/tasks/TriageInput.ts"
export { ProposalBody, ProposalRejectBody } from "../../../core/tasks/ProposalInput.ts"
export { ProjectPatchBody } from "../../../core/tasks/DirectoryInput.ts"
export { ApiKeyCreateBody, SettingsPatchBody } from "../../../core/tasks/SettingsInput.ts"
export {
  HistoryQuery,
  MeetingsQuery,
  OutcomesQuery,
  ProjectSearchQuery,
  SearchQuery
} from "../../../core/tasks/QueryInput.ts"

const optional = Schema.optionalKey

export const Person = Schema.Struct({ id: Schema.String, email: Schema.String, name: Schema.String }).annotate({
  identifier: "Collaborator"
})

/** */
export const TaskSchema = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  description: Schema.String,
  status: Schema.Literals(Statuses),
  priority: Schema.Literals(Priorities),
  triageStatus: Schema.Literals(TriageStatuses),
  origin: Schema.Literals(Origins),
  originDetail: Schema.String,
  triageNotes: Schema.String,
  assignedTo: Schema.NullOr(Person),
  requestedBy: Schema.NullOr(Person),
  assignedToAI: Schema.String,
  project: Schema.Array(Schema.String),
  projectName: Schema.String,
  dueDate: Schema.NullOr(Schema.String),
  startDate: Schema.NullOr(Schema.String),
  hoursEstimated: Schema.NullOr(Schema.Number),
  hoursUsed: Schema.NullOr(Schema.Number),
  isArchived: Schema.Boolean,
  linkToTaskInterface: Schema.String,
  createdAt: Schema.String
}).annotate({ identifier: "Task" })

export const TaskList = Schema.Struct({ tasks: Schema.Array(TaskSchema) }).annotate({ identifier: "TaskList" })
export const OneTask = Schema.Struct({ task: TaskSchema }).annotate({ identifier: "OneTask" })
export const TaskCreated = Schema.Struct({ ok: Schema.Literal(true), task: TaskSchema })
  .annotate({ identifier: "TaskCreated" })
  .pipe(HttpApiSchema.status(201))

export const BulkResult = Schema.Struct({
  ok: Schema.Literal(true),
  successful: Schema.Array(Schema.String),
  failedCount: Schema.Int
}).annotate({ identifier: "BulkResult" })
export const ShortLink = Schema.Struct({
  shortCode: Schema.String,
  shortUrl: Schema.String,
  linkToTaskInterface: Schema.String
}).annotate({ identifier: "ShortLink" })

/** */
export const ProposalSchema = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  type: Schema.String,
  aiStatus: Schema.String,
  proposedChangesObj: Schema.Record(Schema.String, Schema.Unknown),
  taskId: optional(Schema.String),
  taskTitle: optional(Schema.String),
  meetingData: optional(
    Schema.Struct({ title: Schema.String, date: Schema.String, url: Schema.String, authorName: Schema.String })
  ),
  projectData: optional(Schema.Struct({ id: Schema.String, name: Schema.String, clientId: Schema.String }))
}).annotate({ identifier: "Proposal" })

export const ProposalList = Schema.Struct({ proposals: Schema.Array(ProposalSchema) })
export const OneProposal = Schema.Struct({ proposal: ProposalSchema })
export const ProposalCreated = OneProposal.pipe(HttpApiSchema.status(201))
export const ProposalAccepted = Schema.Struct({ proposal: ProposalSchema, task: TaskSchema })
export const ProjectItem = Schema.Struct({ id: Schema.String, name: Schema.String })
export const ProjectSchema = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  status: Schema.String,
  priority: Schema.String,
  startDate: Schema.NullOr(Schema.String),
  endDate: Schema.NullOr(Schema.String),
  clientId: Schema.NullOr(Schema.String),
  clientName: Schema.String,
  accountManager: Schema.NullOr(Person)
}).annotate({ identifier: "Project" })
export const ProjectSearch = Schema.Struct({ projects: Schema.Array(ProjectItem) })
export const ProjectList = Schema.Struct({ projects: Schema.Array(ProjectSchema) })
export const OneProject = Schema.Struct({ project: ProjectSchema })

/** */
export const MeetingSchema = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  startTime: Schema.String,
  duration: Schema.Number,
  link: Schema.Struct({ label: Schema.String, url: Schema.String }),
  recordingType: Schema.String,
  transcriptUrl: Schema.String,
  projects: Schema.Array(Schema.String),
  clients: Schema.Array(Schema.String),
  users: Schema.String,
  summary: Schema.String,
  keyProgress: Schema.String,
  decisionsMade: Schema.String,
  nextActions: Schema.String,
  actionable: Schema.String
}).annotate({ identifier: "Meeting" })
export const MeetingList = Schema.Struct({ meetings: Schema.Array(MeetingSchema) })

export const ProjectDetail = Schema.Struct({
  project: ProjectSchema,
  activeTasks: Schema.Array(TaskSchema),
  completedTasks: Schema.Array(TaskSchema),
  meetings: Schema.Array(MeetingSchema)
}).annotate({ identifier: "ProjectDetail" })
export const Client = Schema.Struct({ id: Schema.String, name: Schema.String }).annotate({ identifier: "Client" })
export const ClientList = Schema.Struct({ clients: Schema.Array(Client) })
export const Outcome = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  status: Schema.String,
  description: Schema.String,
  projectId: Schema.String
}).annotate({ identifier: "Outcome" })
export const OutcomeList = Schema.Struct({ outcomes: Schema.Array(Outcome) })

export const SettingsSchema = Schema.Struct({
  showSentNav: Schema.Boolean,
  notifications: Schema.Struct({ channel: Schema.String, frequency: Schema.String })
}).annotate({ identifier: "Settings" })
export const SettingsAnswer = Schema.Struct({ settings: SettingsSchema })
export const ApiKeySchema = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  keyPrefix: Schema.String,
  createdAt: Schema.String,
  lastUsedAt: Schema.NullOr(Schema.String)
}).annotate({ identifier: "TaskApiKey" })
export const ApiKeyCreated = Schema.Struct({ apiKey: ApiKeySchema, key: Schema.String }).pipe(HttpApiSchema.status(201))
export const ApiKeyList = Schema.Struct({ apiKeys: Schema.Array(ApiKeySchema) })
export const Ok = Schema.Struct({ ok: Schema.Literal(true) })

export const Me = Schema.Struct({ user: Schema.Struct({ email: Schema.String, name: Schema.String }) })
export const Health = Schema.Struct({ status: Schema.Literal("ok"), timestamp: Schema.String })

/** The task inbox contract, "Errors": `{error}`, plus `fields` on a validation failure. */
export const TasksErrorSchema = Schema.Struct({
  error: Schema.String,
  fields: optional(Schema.Record(Schema.String, Schema.String))
}).annotate({ identifier: "TasksError" })

const at = (status: number, description: string) =>
  TasksErrorSchema.annotate({ description }).pipe(HttpApiSchema.status(status))

export const TasksErrors = {
  badRequest: at(400, "Validation failed (with fields) or a malformed request"),
  unauthorized: at(401, "Not authenticated"),
  forbidden: at(403, "Not permitted"),
  notFound: at(404, "Not found, or not yours"),
  conflict: at(409, "Proposal is no longer open: <what it became>, or an Idempotency-Key reused for another request"),
  payloadTooLarge: at(413, "Request body too large"),
  upstream: at(502, "The record store failed"),
  notConfigured: at(501, "Web sign-in is not configured")
} as const
