import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { PersonNotifications } from "../../../core/hub/PersonNotifications.ts"
import { CurrentPerson } from "../../../core/hub/Sessions.ts"
import { NotFound } from "../../../core/kernel/Errors.ts"
import { answerHub } from "../ErrorResponse.ts"
import { MyNotificationsApi } from "./NotificationsApi.ts"

/** Every route acts for the person of the session, and only on what is theirs. */
export const MyNotificationsHandlers = HttpApiBuilder.group(MyNotificationsApi, "myNotifications", (handlers) =>
  Effect.gen(function* () {
    const mine = yield* PersonNotifications
    return handlers
      .handle("feed", ({ query }) =>
        answerHub(
          Effect.gen(function* () {
            const person = yield* CurrentPerson
            return { data: yield* mine.feed(person.userId, { limit: query.limit, cursor: query.cursor }) }
          })
        )
      )
      .handle("readAll", () =>
        Effect.gen(function* () {
          const person = yield* CurrentPerson
          return { data: { read: yield* mine.markAllRead(person.userId) } }
        })
      )
      .handle("read", ({ params }) =>
        answerHub(
          Effect.gen(function* () {
            const person = yield* CurrentPerson
            const read = yield* mine.markRead(person.userId, params.id)
            return { data: { id: read.id, readAt: read.readAt ?? "" } }
          })
        )
      )
      .handle("preferences", () =>
        Effect.gen(function* () {
          const person = yield* CurrentPerson
          return { data: yield* mine.preferences(person.userId) }
        })
      )
      .handle("updatePreferences", ({ payload }) =>
        answerHub(
          Effect.gen(function* () {
            const person = yield* CurrentPerson
            return { data: yield* mine.updatePreferences(person.userId, payload) }
          })
        )
      )
      .handle("pushKey", () => answerHub(Effect.map(mine.pushKey(), (publicKey) => ({ data: { publicKey } }))))
      .handle("subscribePush", ({ payload }) =>
        answerHub(
          Effect.gen(function* () {
            const person = yield* CurrentPerson
            yield* mine.subscribe(person.userId, payload)
            return HttpServerResponse.jsonUnsafe({ data: { endpoint: payload.endpoint } }, { status: 201 })
          })
        )
      )
      .handle("unsubscribePush", ({ payload }) =>
        answerHub(
          Effect.gen(function* () {
            const person = yield* CurrentPerson
            const removed = yield* mine.unsubscribe(person.userId, payload.endpoint)
            if (!removed) return yield* new NotFound({ message: "No such push subscription." })
          })
        )
      )
  })
)
