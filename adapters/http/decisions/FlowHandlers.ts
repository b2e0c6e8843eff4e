import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { DecisionFlow } from "../../../core/decisions/DecisionFlow.ts"
import { answerDecisions } from "../ErrorResponse.ts"
import { DecisionsApi } from "./Api.ts"
import { CurrentUser } from "./Auth.ts"

/** `GET /api/v1/workspace/flow`: the flow of the person's organization, for its admins. */
export const WorkspaceFlowHandlers = HttpApiBuilder.group(DecisionsApi, "workspaceFlow", (handlers) =>
  Effect.gen(function* () {
    const flow = yield* DecisionFlow
    return handlers.handleAll({
      flow: ({ query }) =>
        answerDecisions(
          Effect.flatMap(CurrentUser, (user) => flow.flow(user, query.days)).pipe(Effect.map((data) => ({ data })))
        )
    })
  })
)
