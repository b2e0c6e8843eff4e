import { Context } from "effect"
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import type { TaskUser } from "../../../core/tasks/Tasks.ts"
import { IdempotencyScope } from "../IdempotencyMiddleware.ts"

export class CurrentTaskUser extends Context.Service<CurrentTaskUser, TaskUser>()(
  "adapters/http/tasks/CurrentTaskUser"
) {}

/** The web session cookie's name. */
export const sessionCookie = "tasks_session"

/**
 * Every /api/* route: `X-API-Key` (a user's key or an operator machine key),
 * or else a web session cookie.
 */
export class TasksApiAuth extends HttpApiMiddleware.Service<
  TasksApiAuth,
  { provides: CurrentTaskUser | IdempotencyScope }
>()("adapters/http/tasks/TasksApiAuth", {
  security: { apiKey: HttpApiSecurity.apiKey({ in: "header", key: "X-API-Key" }) }
}) {}

/** `GET /auth/me`: the session cookie only; an API key is not accepted there. */
export class TasksSessionAuth extends HttpApiMiddleware.Service<TasksSessionAuth, { provides: CurrentTaskUser }>()(
  "adapters/http/tasks/TasksSessionAuth",
  { security: { session: HttpApiSecurity.apiKey({ in: "cookie", key: sessionCookie }) } }
) {}
