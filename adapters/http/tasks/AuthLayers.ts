import { Effect, Layer, Redacted } from "effect"
import { HttpServerRequest } from "effect/http"
import { TaskAccess } from "../../../core/tasks/TaskAccess.ts"
import { IdempotencyScope } from "../IdempotencyMiddleware.ts"
import { CurrentTaskUser, sessionCookie, TasksApiAuth, TasksSessionAuth } from "./Auth.ts"
import { isCrossSiteChange } from "../CrossSite.ts"
import { tasksError, tasksErrorResponse } from "./TasksErrors.ts"

const notAuthenticated = () => tasksError(401, "Not authenticated: send X-API-Key or sign in")

/**
 * X-API-Key first; without one, the session cookie. Neither, or an unknown one: 401 `{error}`. A change
 * carried by the session cookie from a page of another site (its `Origin` is not `publicUrl`'s) is 403: the
 * browser sent the cookie, the person did not ask.
 */
export const TasksApiAuthLayer = (options: { readonly publicUrl: string }) =>
  Layer.effect(
    TasksApiAuth,
    Effect.gen(function* () {
      const access = yield* TaskAccess
      return TasksApiAuth.of({
        apiKey: (httpEffect, { credential }) =>
          Effect.gen(function* () {
            const presented = Redacted.value(credential).trim()
            const request = yield* HttpServerRequest.HttpServerRequest
            const bySession = presented.length === 0
            const user = bySession
              ? yield* access.authenticateSession(request.cookies[sessionCookie] ?? "")
              : yield* access.authenticateKey(presented)
            if (user === undefined) return notAuthenticated()
            if (bySession && isCrossSiteChange(request, options.publicUrl)) {
              return tasksError(403, "Cross-site request refused")
            }
            // A person's keys and sessions share one idempotency scope: their own.
            return yield* httpEffect.pipe(
              Effect.provideService(CurrentTaskUser, user),
              Effect.provideService(IdempotencyScope, `person:${user.id}`)
            )
          }).pipe(Effect.catchTag("UpstreamError", tasksErrorResponse))
      })
    })
  )

/** `GET /auth/me`: only a live session cookie; anything else is 401 `{error}`. */
export const TasksSessionAuthLayer = Layer.effect(
  TasksSessionAuth,
  Effect.gen(function* () {
    const access = yield* TaskAccess
    return TasksSessionAuth.of({
      session: (httpEffect, { credential }) =>
        Effect.gen(function* () {
          const user = yield* access.authenticateSession(Redacted.value(credential))
          if (user === undefined) return tasksError(401, "Not signed in")
          return yield* Effect.provideService(httpEffect, CurrentTaskUser, user)
        }).pipe(Effect.catchTag("UpstreamError", tasksErrorResponse))
    })
  })
)
