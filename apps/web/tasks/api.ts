import { ApiError, request } from "../shared/api.ts"
import { safeHref } from "../shared/router.ts"

/**
 * The task inbox's own API, called with the `tasks_session` cookie on the app's own origin. Its errors are
 * `{error, fields?}`: the words of `error`, and each field's message when a validation failed, are what the
 * person reads.
 */

export interface Person {
  readonly id: string
  readonly email: string
  readonly name: string
}

export interface Task {
  readonly id: string
  readonly title: string
  readonly description: string
  readonly status: string
  readonly priority: string
  readonly triageStatus: string
  readonly origin: string
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

export interface Proposal {
  readonly id: string
  readonly name: string
  readonly type: string
  readonly aiStatus: string
  readonly proposedChangesObj: Readonly<Record<string, unknown>>
  readonly taskId?: string
  readonly taskTitle?: string
  readonly meetingData?: {
    readonly title: string
    readonly date: string
    readonly url: string
    readonly authorName: string
  }
  readonly projectData?: { readonly id: string; readonly name: string; readonly clientId: string }
}

export interface ProjectItem {
  readonly id: string
  readonly name: string
}

export interface Project extends ProjectItem {
  readonly status: string
  readonly priority: string
  readonly startDate: string | null
  readonly endDate: string | null
  readonly clientId: string | null
  readonly clientName: string
  readonly accountManager: Person | null
}

export interface Meeting {
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

export interface ProjectDetail {
  readonly project: Project
  readonly activeTasks: ReadonlyArray<Task>
  readonly completedTasks: ReadonlyArray<Task>
  readonly meetings: ReadonlyArray<Meeting>
}

export interface Settings {
  readonly showSentNav: boolean
  readonly notifications: { readonly channel: string; readonly frequency: string }
}

export interface ApiKey {
  readonly id: string
  readonly name: string
  readonly keyPrefix: string
  readonly createdAt: string
  readonly lastUsedAt: string | null
}

export interface Me {
  readonly user: { readonly email: string; readonly name: string }
}

export interface BulkResult {
  readonly ok: true
  readonly successful: ReadonlyArray<string>
  readonly failedCount: number
}

export const statuses = ["Ready to Start", "In Progress", "Done", "Cancelled", "Someday/Maybe"] as const
export const priorities = [
  "P0: Urgent & Critical",
  "P1: Top Priority",
  "P2: Medium Priority",
  "P3: Low Priority",
  "P4: Lowest Priority"
] as const

/** Sends a request with the session cookie; answers the parsed JSON body, or throws an ApiError. */
export const call = request

/** The hub's workspace, where people sign in and keep their notification settings (from the served page). */
export const workspaceUrl: string | undefined = safeHref(
  document.querySelector<HTMLMetaElement>('meta[name="hitl-workspace-url"]')?.content
)

/** The field messages of a validation failure, if the error is one. */
export const fieldMessages = (error: unknown): ReadonlyArray<readonly [string, string]> =>
  error instanceof ApiError && typeof error.details === "object" && error.details !== null
    ? (Object.entries(error.details) as Array<[string, string]>)
    : []

export const get = <T>(path: string, signal?: AbortSignal): Promise<T> =>
  call<T>("GET", path, signal !== undefined ? { signal } : {})

/** A change, sent with the Idempotency-Key of the person's action (the same key when that action is retried). */
export const send = <T>(method: string, path: string, idempotencyKey: string, body?: unknown): Promise<T> =>
  call<T>(method, path, { idempotencyKey, ...(body !== undefined ? { body } : {}) })

const id = (value: string) => encodeURIComponent(value)

export const api = {
  me: (signal?: AbortSignal) => get<Me>("/auth/me", signal),
  inbox: (signal?: AbortSignal) => get<{ tasks: ReadonlyArray<Task> }>("/api/tasks", signal),
  board: (signal?: AbortSignal) => get<{ tasks: ReadonlyArray<Task> }>("/api/tasks/mine", signal),
  sent: (signal?: AbortSignal) => get<{ tasks: ReadonlyArray<Task> }>("/api/tasks/sent", signal),
  search: (query: { readonly clientName: string; readonly activeOnly: boolean }, signal?: AbortSignal) => {
    const params = new URLSearchParams()
    if (query.clientName !== "") params.set("clientName", query.clientName)
    if (query.activeOnly) params.set("activeOnly", "true")
    return get<{ tasks: ReadonlyArray<Task> }>(`/api/tasks/search?${params}`, signal)
  },
  history: (days: number, signal?: AbortSignal) =>
    get<{ tasks: ReadonlyArray<Task> }>(`/api/tasks/history?days=${days}`, signal),
  task: (taskId: string, signal?: AbortSignal) => get<{ task: Task }>(`/api/tasks/${id(taskId)}`, signal),
  proposals: (signal?: AbortSignal) => get<{ proposals: ReadonlyArray<Proposal> }>("/api/proposals", signal),
  searchProjects: (q: string, signal?: AbortSignal) =>
    get<{ projects: ReadonlyArray<ProjectItem> }>(`/api/projects?q=${encodeURIComponent(q)}`, signal),
  myProjects: (signal?: AbortSignal) => get<{ projects: ReadonlyArray<Project> }>("/api/projects/mine", signal),
  project: (projectId: string, signal?: AbortSignal) => get<ProjectDetail>(`/api/projects/${id(projectId)}`, signal),
  recentMeetings: (all: boolean, signal?: AbortSignal) =>
    get<{ meetings: ReadonlyArray<Meeting> }>(`/api/meetings/recent${all ? "?all=true" : ""}`, signal),
  pendingMeetings: (signal?: AbortSignal) => get<{ meetings: ReadonlyArray<Meeting> }>("/api/meetings/pending", signal),
  settings: (signal?: AbortSignal) => get<{ settings: Settings }>("/api/settings", signal),
  apiKeys: (signal?: AbortSignal) => get<{ apiKeys: ReadonlyArray<ApiKey> }>("/api/settings/api-keys", signal),

  accept: (key: string, taskId: string, body: { projectId: string; status?: string }) =>
    send<{ task: Task }>("POST", `/api/tasks/${id(taskId)}/accept`, key, body),
  reject: (key: string, taskId: string, reason: string) =>
    send<{ task: Task }>("POST", `/api/tasks/${id(taskId)}/reject`, key, { reason }),
  needsInfo: (key: string, taskId: string, note: string) =>
    send<{ task: Task }>("POST", `/api/tasks/${id(taskId)}/needs-info`, key, { note }),
  archive: (key: string, taskId: string) => send<{ task: Task }>("POST", `/api/tasks/${id(taskId)}/archive`, key),
  delegate: (key: string, taskId: string, assignedTo: string, reason: string) =>
    send<{ task: Task }>("POST", `/api/tasks/${id(taskId)}/delegate`, key, {
      assignedTo,
      ...(reason !== "" ? { reason } : {})
    }),
  shortLink: (key: string, taskId: string) =>
    send<{ shortCode: string; shortUrl: string }>("POST", `/api/tasks/${id(taskId)}/shortlink`, key),
  create: (
    key: string,
    body: { title: string; description?: string; assignedTo?: string; priority?: string; project?: string }
  ) => send<{ ok: true; task: Task }>("POST", "/api/tasks", key, body),
  bulk: (
    key: string,
    body: {
      taskIds: ReadonlyArray<string>
      action: "accept" | "reject" | "done"
      projectIds?: string[]
      reason?: string
    }
  ) => send<BulkResult>("POST", "/api/tasks/bulk", key, body),
  acceptProposal: (key: string, proposalId: string) =>
    send<{ proposal: Proposal; task: Task }>("POST", `/api/proposals/${id(proposalId)}/accept`, key),
  rejectProposal: (key: string, proposalId: string, reason: string) =>
    send<{ proposal: Proposal }>("POST", `/api/proposals/${id(proposalId)}/reject`, key, { reason }),
  updateSettings: (key: string, body: Settings) => send<{ settings: Settings }>("PATCH", "/api/settings", key, body),
  createApiKey: (key: string, name: string) =>
    send<{ apiKey: ApiKey; key: string }>("POST", "/api/settings/api-keys", key, { name }),
  revokeApiKey: (key: string, apiKeyId: string) =>
    send<{ ok: true }>("DELETE", `/api/settings/api-keys/${id(apiKeyId)}`, key)
}
