import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { DecisionPages } from "../../../core/decisions/pages/DecisionPages.ts"
import { Hub } from "../../../core/kernel/Limits.ts"
import { answerDecisions } from "../ErrorResponse.ts"
import { DecisionsApi } from "./Api.ts"
import { CurrentUser } from "./Auth.ts"

/** The pages plane's handlers: each reads the person from the workspace auth and asks DecisionPages. */
export const PagesHandlers = HttpApiBuilder.group(DecisionsApi, "pages", (handlers) =>
  Effect.gen(function* () {
    const pages = yield* DecisionPages
    return handlers.handleAll({
      list: () =>
        answerDecisions(
          Effect.flatMap(CurrentUser, pages.pages).pipe(Effect.map((list) => ({ data: { pages: list } })))
        ),
      get: ({ params, query }) =>
        answerDecisions(
          Effect.flatMap(CurrentUser, (user) =>
            pages.page(user, params.id, { cursor: query.cursor, statuses: query.status })
          ).pipe(Effect.map((page) => ({ data: { page } })))
        ),
      act: ({ params, payload }) =>
        answerDecisions(
          Effect.flatMap(CurrentUser, (user) => pages.act(user, params.actionId, payload)).pipe(
            Effect.map((result) => ({ data: result }))
          )
        ),
      summary: () => answerDecisions(Effect.flatMap(CurrentUser, pages.summary).pipe(Effect.map((data) => ({ data })))),
      activity: () =>
        answerDecisions(Effect.flatMap(CurrentUser, pages.activity).pipe(Effect.map((items) => ({ data: { items } })))),
      search: ({ query }) =>
        answerDecisions(
          Effect.flatMap(CurrentUser, (user) =>
            pages.search(user, query.q, query.limit ?? Hub.serviceDataLimitMax)
          ).pipe(Effect.map((hits) => ({ data: { hits } })))
        )
    })
  })
)
