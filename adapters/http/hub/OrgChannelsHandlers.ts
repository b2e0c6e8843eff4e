import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { OrgChatWebhooks } from "../../../core/hub/OrgChatWebhooks.ts"
import { CurrentPerson } from "../../../core/hub/Sessions.ts"
import { answerHub } from "../ErrorResponse.ts"
import { OrgChannelsApi } from "./OrgChannelsApi.ts"

/** Every route acts for the person of the session, as an owner or admin of the organization named. */
export const OrgChannelsHandlers = HttpApiBuilder.group(OrgChannelsApi, "orgChannels", (handlers) =>
  Effect.gen(function* () {
    const webhooks = yield* OrgChatWebhooks
    return handlers
      .handle("chatWebhook", ({ params }) =>
        answerHub(
          Effect.gen(function* () {
            const person = yield* CurrentPerson
            return { data: yield* webhooks.view(person.userId, params.orgId) }
          })
        )
      )
      .handle("setChatWebhook", ({ params, payload }) =>
        answerHub(
          Effect.gen(function* () {
            const person = yield* CurrentPerson
            return { data: yield* webhooks.set(person.userId, params.orgId, payload) }
          })
        )
      )
      .handle("removeChatWebhook", ({ params }) =>
        answerHub(
          Effect.gen(function* () {
            const person = yield* CurrentPerson
            yield* webhooks.remove(person.userId, params.orgId)
          })
        )
      )
  })
)
