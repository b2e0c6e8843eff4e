import { Schema } from "effect"
import { HttpApiSchema } from "effect/http-api"
import { Origins, Priorities, Statuses, TriageStatuses } from "../../../core/tasks/Values.ts"

// Enumerated inputs are plain strings on the contract: the core checks them, so an unknown value is answered
// with the task inbox contract's `Must be one of: ...` and aliases are accepted.

const optional = Schema.optionalKey
const clearable = (schema: Schema.Top) => Schema.optionalKey(Schema.NullOr(schema as typeof Schema.String))

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

export const CreateTaskBody = Schema.Struct({
  title: Schema.String,
  description: optional(Schema.String),
  origin: optional(Schema.String),
  originDetail: optional(Schema.String),
  assignedTo: optional(Schema.String),
  requestedBy: optional(Schema.String),
  priority: optional(Schema.String),
  project: optional(Schema.String)
}).annotate({ identifier: "CreateTaskBody" })

export const PatchTaskBody = Schema.Struct({
  title: clearable(Schema.String),
  description: clearable(Schema.String),
  priority: clearable(Schema.String),
  status: clearable(Schema.String),
  triageStatus: clearable(Schema.String),
  triageNotes: clearable(Schema.String),
  dueDate: clearable(Schema.String),
  startDate: clearable(Schema.String),
  hoursEstimated: optional(Schema.NullOr(Schema.Number)),
  assignedTo: clearable(Schema.String),
  project: clearable(Schema.String),
  originDetail: clearable(Schema.String)
}).annotate({ identifier: "PatchTaskBody" })

export const AcceptBody = Schema.Struct({ projectId: Schema.String, status: optional(Schema.String) })
export const RejectBody = Schema.Struct({ reason: Schema.String })
export const NeedsInfoBody = Schema.Struct({ note: Schema.String })
export const DelegateBody = Schema.Struct({ assignedTo: Schema.String, reason: optional(Schema.String) })
export const BulkBody = Schema.Struct({
  taskIds: Schema.Array(Schema.String).check(Schema.isMaxLength(100)),
  action: Schema.String,
  projectIds: optional(Schema.Array(Schema.String)),
  reason: optional(Schema.String)
}).annotate({ identifier: "BulkBody" })
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

export const SearchQuery = { activeOnly: optional(Schema.String), clientName: optional(Schema.String) }
export const HistoryQuery = { days: optional(Schema.String) }

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
export const ProposalBody = Schema.Struct({
  taskId: optional(Schema.String),
  projectId: optional(Schema.String),
  outcomeId: optional(Schema.String),
  meetingId: optional(Schema.String),
  type: Schema.String,
  name: optional(Schema.String),
  proposedChangesObj: Schema.Unknown
}).annotate({ identifier: "ProposalBody" })
export const ProposalRejectBody = Schema.Struct({ reason: Schema.String })

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
export const MeetingsQuery = {
  all: optional(Schema.String),
  client: optional(Schema.String),
  start: optional(Schema.String),
  end: optional(Schema.String)
}

export const ProjectDetail = Schema.Struct({
  project: ProjectSchema,
  activeTasks: Schema.Array(TaskSchema),
  completedTasks: Schema.Array(TaskSchema),
  meetings: Schema.Array(MeetingSchema)
}).annotate({ identifier: "ProjectDetail" })
export const ProjectPatchBody = Schema.Struct({
  status: optional(Schema.String),
  priority: optional(Schema.String),
  startDate: clearable(Schema.String),
  endDate: clearable(Schema.String),
  clientId: clearable(Schema.String),
  accountManager: clearable(Schema.String)
})

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
/** Nested (`notifications: {channel}`) or with dotted keys (`"notifications.channel"`), as the task inbox contract writes them. */
export const SettingsPatchBody = Schema.Struct({
  showSentNav: optional(Schema.Boolean),
  notifications: optional(Schema.Struct({ channel: optional(Schema.String), frequency: optional(Schema.String) })),
  "notifications.channel": optional(Schema.String),
  "notifications.frequency": optional(Schema.String)
})

export const ApiKeySchema = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  keyPrefix: Schema.String,
  createdAt: Schema.String,
  lastUsedAt: Schema.NullOr(Schema.String)
}).annotate({ identifier: "TaskApiKey" })
export const ApiKeyCreateBody = Schema.Struct({ name: Schema.String })
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
