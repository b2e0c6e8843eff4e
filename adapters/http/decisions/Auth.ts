import { Context } from "effect"
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import type { CallerIdentity, WorkspaceUser } from "../../../core/decisions/Decisions.ts"
import { IdempotencyScope } from "../IdempotencyMiddleware.ts"

export class CurrentCaller extends Context.Service<CurrentCaller, CallerIdentity>()(
  "adapters/http/decisions/CurrentCaller"
) {}

export class CurrentUser extends Context.Service<CurrentUser, WorkspaceUser>()("adapters/http/decisions/CurrentUser") {}

/** Caller plane: `Authorization: Bearer dcd_<key>`, org-scoped. */
export class CallerAuth extends HttpApiMiddleware.Service<CallerAuth, { provides: CurrentCaller | IdempotencyScope }>()(
  "adapters/http/decisions/CallerAuth",
  { security: { callerKey: HttpApiSecurity.bearer } }
) {}

/**
 * Workspace plane: the service key `X-Decisions-Api-Key` (AUTH-1) and an identity token
 * `X-Workspace-Token` (AUTH-4, audience `decisions`). Both are required; the key alone grants nothing.
 */
export class WorkspaceAuth extends HttpApiMiddleware.Service<
  WorkspaceAuth,
  { provides: CurrentUser | IdempotencyScope }
>()("adapters/http/decisions/WorkspaceAuth", {
  security: { workspaceToken: HttpApiSecurity.apiKey({ in: "header", key: "X-Workspace-Token" }) }
}) {}
