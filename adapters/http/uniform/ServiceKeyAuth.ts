import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"

/**
 * AUTH-1: the static per-service transport key the hub sends with every call. One middleware per header
 * name, so each service documents its own security scheme in OpenAPI.
 */
export class DecisionsServiceKey extends HttpApiMiddleware.Service<DecisionsServiceKey>()(
  "adapters/http/DecisionsServiceKey",
  { security: { decisionsApiKey: HttpApiSecurity.apiKey({ in: "header", key: "X-Decisions-Api-Key" }) } }
) {}

export class TasksServiceKey extends HttpApiMiddleware.Service<TasksServiceKey>()("adapters/http/TasksServiceKey", {
  security: { tasksApiKey: HttpApiSecurity.apiKey({ in: "header", key: "X-Tasks-Api-Key" }) }
}) {}
