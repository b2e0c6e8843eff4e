import { Effect } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentPerson } from "../../../core/hub/Sessions.ts"
import { Workspace } from "../../../core/hub/Workspace.ts"
import { answerHub } from "../ErrorResponse.ts"
import { WorkspaceApi } from "./WorkspaceApi.ts"

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
        answerHub(
          Effect.flatMap(CurrentPerson, (person) => workspace.pages(person, params.serviceId)).pipe(
            Effect.map((pages) => ({ data: { pages } }))
          )
        ),
      page: ({ params }) =>
        answerHub(
          Effect.gen(function* () {
            const person = yield* CurrentPerson
            const page = yield* workspace.page(person, params.serviceId, params.pageId, yield* rawQuery)
            return { data: { page } }
          })
        ),
      act: ({ params, payload, headers }) =>
        answerHub(
          Effect.flatMap(CurrentPerson, (person) =>
            workspace.act(person, params.serviceId, params.actionId, payload, headers["idempotency-key"])
          ).pipe(Effect.map((result) => ({ data: result })))
        ),
      embed: ({ params }) =>
        answerHub(
          Effect.flatMap(CurrentPerson, (person) => workspace.embed(person, params.serviceId)).pipe(
            Effect.map((embed) => ({ data: embed }))
          )
        )
    })
  })
)
