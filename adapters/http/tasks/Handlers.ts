import { Clock, Effect, Layer } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import type { Task } from "../../../core/tasks/Task.ts"
import { TaskDirectory } from "../../../core/tasks/Directory.ts"
import { Proposals } from "../../../core/tasks/Proposals.ts"
import { TaskSettings } from "../../../core/tasks/Settings.ts"
import { TaskAccess } from "../../../core/tasks/TaskAccess.ts"
import { Tasks, type TaskUser } from "../../../core/tasks/Tasks.ts"
import { factsHandler, uniformHandlers, type UniformConfig } from "../uniform/UniformHandlers.ts"
import { TasksApi } from "./Api.ts"
import { CurrentTaskUser } from "./Auth.ts"
import { tasksErrorResponse, type TasksDomainError } from "./TasksErrors.ts"

/** Use-case failures become the task inbox contract's `{error}` answers (TasksErrors.ts). */
const answer = <A, E extends TasksDomainError, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catch(effect, tasksErrorResponse)

const asUser = <A, E extends TasksDomainError, R>(f: (user: TaskUser) => Effect.Effect<A, E, R>) =>
  answer(Effect.flatMap(CurrentTaskUser, f))

export const TasksUniformHandlers = (config: UniformConfig) =>
  HttpApiBuilder.group(TasksApi, "uniform", (handlers) =>
    Effect.map(Effect.all([uniformHandlers(config), factsHandler("hub")]), ([h, facts]) =>
      handlers.handleAll({ ...h, facts })
    )
  )

export const TasksPublicHandlers = HttpApiBuilder.group(TasksApi, "public", (handlers) =>
  Effect.gen(function* () {
    const tasks = yield* Tasks
    return handlers.handleAll({
      health: () =>
        Effect.map(Clock.currentTimeMillis, (now) => ({
          status: "ok" as const,
          timestamp: new Date(now).toISOString()
        })),
      shortLink: ({ params }) =>
        answer(
          Effect.map(tasks.resolveShortCode(params.code), (url) => HttpServerResponse.redirect(url, { status: 302 }))
        )
    })
  })
)

export const TasksSessionHandlers = HttpApiBuilder.group(TasksApi, "session", (handlers) =>
  handlers.handleAll({
    me: () => Effect.map(CurrentTaskUser, (user) => ({ user: { email: user.email, name: user.name } }))
  })
)

export const TaskHandlers = HttpApiBuilder.group(TasksApi, "tasks", (handlers) =>
  Effect.gen(function* () {
    const tasks = yield* Tasks
    const list = <E extends TasksDomainError>(f: (user: TaskUser) => Effect.Effect<ReadonlyArray<Task>, E>) =>
      asUser((user) => Effect.map(f(user), (tasks) => ({ tasks })))
    const one = <E>(effect: Effect.Effect<Task, E>) => Effect.map(effect, (task) => ({ task }))
    return handlers.handleAll({
      inbox: () => list(tasks.inbox),
      mine: () => list(tasks.mine),
      sent: () => list(tasks.sent),
      search: ({ query }) =>
        list((user) => tasks.search(user, { activeOnly: query.activeOnly ?? false, clientName: query.clientName })),
      history: ({ query }) => list((user) => tasks.history(user, query.days)),
      get: ({ params }) => asUser((user) => one(tasks.get(user, params.id))),
      create: ({ payload }) =>
        asUser((user) => Effect.map(tasks.create(user, payload), (task) => ({ ok: true as const, task }))),
      bulk: ({ payload }) => asUser((user) => tasks.bulk(user, payload)),
      update: ({ params, payload }) => asUser((user) => one(tasks.update(user, params.id, payload))),
      accept: ({ params, payload }) => asUser((user) => one(tasks.accept(user, params.id, payload))),
      reject: ({ params, payload }) => asUser((user) => one(tasks.reject(user, params.id, payload.reason))),
      needsInfo: ({ params, payload }) => asUser((user) => one(tasks.needsInfo(user, params.id, payload.note))),
      archive: ({ params }) => asUser((user) => one(tasks.archive(user, params.id))),
      delegate: ({ params, payload }) => asUser((user) => one(tasks.delegate(user, params.id, payload))),
      shortlink: ({ params }) => asUser((user) => tasks.shortlink(user, params.id))
    })
  })
)

export const ProposalHandlers = HttpApiBuilder.group(TasksApi, "proposals", (handlers) =>
  Effect.gen(function* () {
    const proposals = yield* Proposals
    return handlers.handleAll({
      list: () => asUser((user) => Effect.map(proposals.list(user), (list) => ({ proposals: list }))),
      create: ({ payload }) =>
        asUser((user) => Effect.map(proposals.create(user, payload), (proposal) => ({ proposal }))),
      accept: ({ params }) => asUser((user) => proposals.accept(user, params.id)),
      reject: ({ params, payload }) =>
        asUser((user) => Effect.map(proposals.reject(user, params.id, payload.reason), (proposal) => ({ proposal })))
    })
  })
)

export const DirectoryHandlers = HttpApiBuilder.group(TasksApi, "directory", (handlers) =>
  Effect.gen(function* () {
    const directory = yield* TaskDirectory
    return handlers.handleAll({
      searchProjects: ({ query }) =>
        asUser(() => Effect.map(directory.searchProjects(query.q), (projects) => ({ projects }))),
      myProjects: () => asUser((user) => Effect.map(directory.myProjects(user), (projects) => ({ projects }))),
      project: ({ params }) => asUser((user) => directory.project(user, params.id)),
      updateProject: ({ params, payload }) =>
        asUser((user) => Effect.map(directory.updateProject(user, params.id, payload), (project) => ({ project }))),
      clients: () => asUser(() => Effect.map(directory.clients(), (clients) => ({ clients }))),
      searchClients: ({ query }) =>
        asUser(() => Effect.map(directory.searchClients(query.q), (clients) => ({ clients }))),
      outcomes: ({ query }) =>
        asUser(() => Effect.map(directory.outcomes(query.projectId), (outcomes) => ({ outcomes }))),
      recentMeetings: ({ query }) =>
        asUser((user) =>
          Effect.map(
            directory.recentMeetings(user, {
              all: query.all ?? false,
              client: query.client,
              start: query.start,
              end: query.end
            }),
            (meetings) => ({ meetings })
          )
        ),
      pendingMeetings: () => asUser((user) => Effect.map(directory.pendingMeetings(user), (meetings) => ({ meetings })))
    })
  })
)

export const SettingsHandlers = HttpApiBuilder.group(TasksApi, "settings", (handlers) =>
  Effect.gen(function* () {
    const settings = yield* TaskSettings
    const access = yield* TaskAccess
    return handlers.handleAll({
      get: () => asUser((user) => Effect.map(settings.get(user), (saved) => ({ settings: saved }))),
      update: ({ payload }) =>
        asUser((user) => Effect.map(settings.update(user, payload), (saved) => ({ settings: saved }))),
      listKeys: () => asUser((user) => Effect.map(access.listApiKeys(user), (apiKeys) => ({ apiKeys }))),
      createKey: ({ payload }) => asUser((user) => access.createApiKey(user, payload.name)),
      revokeKey: ({ params }) =>
        asUser((user) => Effect.as(access.revokeApiKey(user, params.id), { ok: true as const }))
    })
  })
)

/** Every group of the task inbox contract but the uniform one. Requires the task inbox's use cases (`TaskInbox`). */
export const TasksHandlers = Layer.mergeAll(
  TasksPublicHandlers,
  TasksSessionHandlers,
  TaskHandlers,
  ProposalHandlers,
  DirectoryHandlers,
  SettingsHandlers
)
