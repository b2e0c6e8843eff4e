import type * as S from "../../../adapters/http/tasks/Schemas.ts"
import type { Priorities, Statuses } from "../../../core/tasks/Values.ts"
import { ApiError, request } from "../shared/api.ts"
import { safeHref } from "../shared/router.ts"

/**
 * The task inbox's own API, called with the `tasks_session` cookie on the app's own origin. Its errors are
 * `{error, fields?}`: the words of `error`, and each field's message when a validation failed, are what the
 * person reads. Its answers' types are the contract's (type-only: nothing of it reaches the browser, and a
 * changed field fails the web app's type check).
 */

export type Task = typeof S.TaskSchema.Encoded
export type Proposal = typeof S.ProposalSchema.Encoded
export type ProjectItem = typeof S.ProjectItem.Encoded
export type Project = typeof S.ProjectSchema.Encoded
export type Meeting = typeof S.MeetingSchema.Encoded
export type ProjectDetail = typeof S.ProjectDetail.Encoded
export type Settings = typeof S.SettingsSchema.Encoded
export type ApiKey = typeof S.ApiKeySchema.Encoded
export type Me = typeof S.Me.Encoded
export type BulkResult = typeof S.BulkResult.Encoded

// The value sets, written here so that the browser loads nothing of the core; checked against the core's.
export const statuses = [
  "Ready to Start",
  "In Progress",
  "Done",
  "Cancelled",
  "Someday/Maybe"
] as const satisfies typeof Statuses
export const priorities = [
  "P0: Urgent & Critical",
  "P1: Top Priority",
  "P2: Medium Priority",
  "P3: Low Priority",
  "P4: Lowest Priority"
] as const satisfies typeof Priorities

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
