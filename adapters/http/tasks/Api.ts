import { IdempotencyKeyOptional, TasksApiKeyHeaders } from "../ContractHeaders.ts"
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { reportAllIssues } from "../ParseOptions.ts"
import { TasksUniformGroup } from "../uniform/UniformApi.ts"
import { TasksApiAuth, TasksSessionAuth } from "./Auth.ts"
import * as S from "./Schemas.ts"
import { IdempotencyCreate, IdempotencyOptional } from "../IdempotencyMiddleware.ts"

const E = S.TasksErrors
const id = { id: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(64)) }
const reads = [E.badRequest, E.unauthorized, E.notFound, E.upstream]
/** A change may also be a reused Idempotency-Key (409), an oversized body (413) or a cross-site session (403). */
const writes = [E.badRequest, E.unauthorized, E.forbidden, E.notFound, E.conflict, E.payloadTooLarge, E.upstream]
const apiKey = OpenApi.annotations({ description: "X-API-Key (a user key or an operator machine key), or a session" })

/** The task inbox contract: `/health` and short links, no credential. (The uniform `/api/v1` group is separate.) */
export class TasksPublicGroup extends HttpApiGroup.make("public").add(
  HttpApiEndpoint.get("health", "/health", { success: S.Health }),
  HttpApiEndpoint.get("shortLink", "/s/:code", {
    params: { code: Schema.String.check(Schema.isMaxLength(64)) },
    success: HttpApiSchema.Empty(302),
    error: [E.notFound, E.upstream]
  }).annotate(OpenApi.Description, "Redirects to the task's linkToTaskInterface.")
) {}

/** `GET /auth/me`: the session cookie only. */
export class TasksSessionGroup extends HttpApiGroup.make("session")
  .add(HttpApiEndpoint.get("me", "/auth/me", { success: S.Me, error: [E.unauthorized, E.upstream] }))
  .middleware(TasksSessionAuth) {}

const optionalText = Schema.optional(Schema.String.check(Schema.isMaxLength(4096)))

/**
 * Web sign-in through the hub (the platform's OpenID provider): authorization code with PKCE, state and
 * nonce. The callback creates the task inbox's own session (cookie `tasks_session`).
 */
export class TasksSignInGroup extends HttpApiGroup.make("signIn").add(
  HttpApiEndpoint.get("login", "/auth/login", {
    query: { next: optionalText },
    success: HttpApiSchema.Empty(303),
    error: [E.notConfigured, E.upstream]
  }).annotate(
    OpenApi.Description,
    "Redirects to the hub's sign-in; after it, back to `next` (a path of the task inbox, default `/`)."
  ),
  HttpApiEndpoint.get("callback", "/auth/callback", {
    query: {
      code: optionalText,
      state: optionalText,
      iss: optionalText,
      error: optionalText,
      error_description: optionalText
    },
    success: HttpApiSchema.Empty(303),
    error: [E.unauthorized, E.notConfigured, E.upstream]
  }).annotate(OpenApi.Description, "Where the hub sends the browser back: signs in, then redirects to `next`."),
  HttpApiEndpoint.post("logout", "/auth/logout", {
    success: HttpApiSchema.NoContent,
    error: [E.forbidden]
  }).annotate(OpenApi.Description, "Ends the session of the `tasks_session` cookie.")
) {}

export class TasksGroup extends HttpApiGroup.make("tasks")
  .add(
    HttpApiEndpoint.get("inbox", "/api/tasks", { headers: TasksApiKeyHeaders, success: S.TaskList, error: reads }),
    HttpApiEndpoint.get("mine", "/api/tasks/mine", { headers: TasksApiKeyHeaders, success: S.TaskList, error: reads }),
    HttpApiEndpoint.get("sent", "/api/tasks/sent", { headers: TasksApiKeyHeaders, success: S.TaskList, error: reads }),
    HttpApiEndpoint.get("search", "/api/tasks/search", {
      headers: TasksApiKeyHeaders,
      query: S.SearchQuery,
      success: S.TaskList,
      error: reads
    }),
    HttpApiEndpoint.get("history", "/api/tasks/history", {
      headers: TasksApiKeyHeaders,
      query: S.HistoryQuery,
      success: S.TaskList,
      error: reads
    }),
    HttpApiEndpoint.get("get", "/api/tasks/:id", {
      params: id,
      success: S.OneTask,
      headers: TasksApiKeyHeaders,
      error: reads
    }),
    HttpApiEndpoint.post("create", "/api/tasks", {
      headers: { ...TasksApiKeyHeaders, ...IdempotencyKeyOptional },
      payload: S.CreateTaskBody,
      success: S.TaskCreated,
      error: writes
    }).middleware(IdempotencyCreate),
    HttpApiEndpoint.post("bulk", "/api/tasks/bulk", {
      headers: { ...TasksApiKeyHeaders, ...IdempotencyKeyOptional },
      payload: S.BulkBody,
      success: S.BulkResult,
      error: writes
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.patch("update", "/api/tasks/:id", {
      params: id,
      headers: { ...TasksApiKeyHeaders, ...IdempotencyKeyOptional },
      payload: S.PatchTaskBody,
      success: S.OneTask,
      error: writes
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.post("accept", "/api/tasks/:id/accept", {
      params: id,
      headers: { ...TasksApiKeyHeaders, ...IdempotencyKeyOptional },
      payload: S.AcceptBody,
      success: S.OneTask,
      error: writes
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.post("reject", "/api/tasks/:id/reject", {
      params: id,
      headers: { ...TasksApiKeyHeaders, ...IdempotencyKeyOptional },
      payload: S.RejectBody,
      success: S.OneTask,
      error: writes
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.post("needsInfo", "/api/tasks/:id/needs-info", {
      params: id,
      headers: { ...TasksApiKeyHeaders, ...IdempotencyKeyOptional },
      payload: S.NeedsInfoBody,
      success: S.OneTask,
      error: writes
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.post("archive", "/api/tasks/:id/archive", {
      params: id,
      headers: { ...TasksApiKeyHeaders, ...IdempotencyKeyOptional },
      success: S.OneTask,
      error: writes
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.post("delegate", "/api/tasks/:id/delegate", {
      params: id,
      headers: { ...TasksApiKeyHeaders, ...IdempotencyKeyOptional },
      payload: S.DelegateBody,
      success: S.OneTask,
      error: writes
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.post("shortlink", "/api/tasks/:id/shortlink", {
      params: id,
      headers: { ...TasksApiKeyHeaders, ...IdempotencyKeyOptional },
      success: S.ShortLink,
      error: writes
    }).middleware(IdempotencyOptional)
  )
  .middleware(TasksApiAuth)
  .annotateMerge(apiKey) {}

export class ProposalsGroup extends HttpApiGroup.make("proposals")
  .add(
    HttpApiEndpoint.get("list", "/api/proposals", {
      headers: TasksApiKeyHeaders,
      success: S.ProposalList,
      error: reads
    }),
    HttpApiEndpoint.post("create", "/api/proposals", {
      headers: { ...TasksApiKeyHeaders, ...IdempotencyKeyOptional },
      payload: S.ProposalBody,
      success: S.ProposalCreated,
      error: writes
    }).middleware(IdempotencyCreate),
    HttpApiEndpoint.post("accept", "/api/proposals/:id/accept", {
      params: id,
      headers: { ...TasksApiKeyHeaders, ...IdempotencyKeyOptional },
      success: S.ProposalAccepted,
      error: [...writes, E.forbidden, E.conflict]
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.post("reject", "/api/proposals/:id/reject", {
      params: id,
      headers: { ...TasksApiKeyHeaders, ...IdempotencyKeyOptional },
      payload: S.ProposalRejectBody,
      success: S.OneProposal,
      error: [...writes, E.forbidden, E.conflict]
    }).middleware(IdempotencyOptional)
  )
  .middleware(TasksApiAuth)
  .annotateMerge(apiKey) {}

export class DirectoryGroup extends HttpApiGroup.make("directory")
  .add(
    HttpApiEndpoint.get("searchProjects", "/api/projects", {
      headers: TasksApiKeyHeaders,
      query: S.ProjectSearchQuery,
      success: S.ProjectSearch,
      error: reads
    }),
    HttpApiEndpoint.get("myProjects", "/api/projects/mine", {
      headers: TasksApiKeyHeaders,
      success: S.ProjectList,
      error: reads
    }),
    HttpApiEndpoint.get("project", "/api/projects/:id", {
      params: id,
      success: S.ProjectDetail,
      headers: TasksApiKeyHeaders,
      error: reads
    }),
    HttpApiEndpoint.patch("updateProject", "/api/projects/:id", {
      params: id,
      headers: { ...TasksApiKeyHeaders, ...IdempotencyKeyOptional },
      payload: S.ProjectPatchBody,
      success: S.OneProject,
      error: writes
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.get("clients", "/api/clients", {
      headers: TasksApiKeyHeaders,
      success: S.ClientList,
      error: reads
    }),
    HttpApiEndpoint.get("searchClients", "/api/clients/search", {
      headers: TasksApiKeyHeaders,
      query: { q: Schema.optionalKey(Schema.String) },
      success: S.ClientList,
      error: reads
    }),
    HttpApiEndpoint.get("outcomes", "/api/outcomes", {
      headers: TasksApiKeyHeaders,
      query: S.OutcomesQuery,
      success: S.OutcomeList,
      error: reads
    }),
    HttpApiEndpoint.get("recentMeetings", "/api/meetings/recent", {
      headers: TasksApiKeyHeaders,
      query: S.MeetingsQuery,
      success: S.MeetingList,
      error: reads
    }),
    HttpApiEndpoint.get("pendingMeetings", "/api/meetings/pending", {
      headers: TasksApiKeyHeaders,
      success: S.MeetingList,
      error: reads
    })
  )
  .middleware(TasksApiAuth)
  .annotateMerge(apiKey) {}

export class SettingsGroup extends HttpApiGroup.make("settings")
  .add(
    HttpApiEndpoint.get("get", "/api/settings", {
      headers: TasksApiKeyHeaders,
      success: S.SettingsAnswer,
      error: reads
    }),
    HttpApiEndpoint.patch("update", "/api/settings", {
      headers: { ...TasksApiKeyHeaders, ...IdempotencyKeyOptional },
      payload: S.SettingsPatchBody,
      success: S.SettingsAnswer,
      error: writes
    }).middleware(IdempotencyOptional),
    HttpApiEndpoint.get("listKeys", "/api/settings/api-keys", {
      headers: TasksApiKeyHeaders,
      success: S.ApiKeyList,
      error: reads
    }),
    HttpApiEndpoint.post("createKey", "/api/settings/api-keys", {
      headers: { ...TasksApiKeyHeaders, ...IdempotencyKeyOptional },
      payload: S.ApiKeyCreateBody,
      success: S.ApiKeyCreated,
      error: writes
    })
      .middleware(IdempotencyOptional)
      .annotate(OpenApi.Description, "Generates a key; the secret (`key`) is shown in this answer only."),
    HttpApiEndpoint.delete("revokeKey", "/api/settings/api-keys/:id", {
      params: id,
      headers: { ...TasksApiKeyHeaders, ...IdempotencyKeyOptional },
      success: S.Ok,
      error: writes
    }).middleware(IdempotencyOptional)
  )
  .middleware(TasksApiAuth)
  .annotateMerge(apiKey) {}

/** The task inbox service's contract, with the uniform `/api/v1` group. */
export class TasksApi extends HttpApi.make("tasks")
  .add(TasksUniformGroup)
  .add(TasksPublicGroup)
  .add(TasksSessionGroup)
  .add(TasksSignInGroup)
  .add(TasksGroup)
  .add(ProposalsGroup)
  .add(DirectoryGroup)
  .add(SettingsGroup)
  .annotate(HttpApi.ParseOptions, reportAllIssues)
  .annotate(HttpApi.HeadersParseOptions, {})
  .annotateMerge(OpenApi.annotations({ title: "Task inbox service", description: "Tasks, triage and proposals" })) {}
