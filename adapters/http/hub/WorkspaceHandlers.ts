import { Effect } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentPerson } from "../../../core/hub/Sessions.ts"
import { Workspace, type ServiceRefused } from "../../../core/hub/Workspace.ts"
import { isErrorCode, type ErrorCode } from "../../../core/kernel/index.ts"
import { domainErrorResponse, errorResponse } from "../ErrorResponse.ts"
import { WorkspaceApi } from "./WorkspaceApi.ts"

const byStatus: Record<number, ErrorCode> = {
  400: "VALIDATION_ERROR",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  409: "CONFLICT",
  413: "PAYLOAD_TOO_LARGE",
  422: "VALIDATION_ERROR",
  429: "RATE_LIMITED"
}

/** A service's refusal, relayed with its status: its code when the taxonomy knows it, its message and details. */
const refused = (error: ServiceRefused) => {
  const code: ErrorCode = isErrorCode(error.code) ? error.code : (byStatus[error.status] ?? "VALIDATION_ERROR")
  return errorResponse(code, {
    status: error.status,
    message: error.message,
    details: error.details,
    ...(error.status === 429 ? { headers: { "retry-after": "60" } } : {})
  })
}

const answer = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catch(effect, (error) => {
    const tagged = error as { readonly _tag?: string }
    if (tagged._tag === "ServiceRefused") return Effect.succeed(refused(error as ServiceRefused))
    if (tagged._tag === "EmbedNotConsented") return Effect.succeed(errorResponse("EMBED_NOT_CONSENTED"))
    return domainErrorResponse(error, "hub")
  })

const rawQuery = Effect.map(
  HttpServerRequest.HttpServerRequest,
  (request) => new URL(request.url, "http://hub.invalid").search
)

/** The workspace routes: the signed-in person (HubPersonAuth) and the Workspace use cases. */
export const WorkspaceHandlers = HttpApiBuilder.group(WorkspaceApi, "workspace", (handlers) =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    return handlers.handleAll({
      apps: () => Effect.flatMap(CurrentPerson, workspace.apps).pipe(Effect.map((apps) => ({ data: apps }))),
      pages: ({ params }) =>
        answer(
          Effect.flatMap(CurrentPerson, (person) => workspace.pages(person, params.serviceId)).pipe(
            Effect.map((pages) => ({ data: { pages } }))
          )
        ),
      page: ({ params }) =>
        answer(
          Effect.gen(function* () {
            const person = yield* CurrentPerson
            const page = yield* workspace.page(person, params.serviceId, params.pageId, yield* rawQuery)
            return { data: { page } }
          })
        ),
      act: ({ params, payload, headers }) =>
        answer(
          Effect.flatMap(CurrentPerson, (person) =>
            workspace.act(person, params.serviceId, params.actionId, payload, headers["idempotency-key"])
          ).pipe(Effect.map((result) => ({ data: result })))
        ),
      embed: ({ params }) =>
        answer(
          Effect.flatMap(CurrentPerson, (person) => workspace.embed(person, params.serviceId)).pipe(
            Effect.map((embed) => ({ data: embed }))
          )
        )
    })
  })
)
