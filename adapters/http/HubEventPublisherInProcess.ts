import { Clock, Effect, Layer, Redacted } from "effect"
import { sign } from "../../core/auth/Signature.ts"
import { HubEventPublisher, type HubAnswer } from "../../core/events/HubEventPublisher.ts"
import { EventIngest } from "../../core/hub/EventIngest.ts"
import { IdGenerator } from "../../core/kernel/Ids.ts"
import { hubErrorResponse, isConnectionFailure } from "./ErrorResponse.ts"

/**
 * The HubEventPublisher port for a producer whose hub runs in the same process (the bundled server with no
 * `HUB_URL` of its own): each event goes to the hub's EventIngest, the use case behind
 * `POST /api/webhooks/events`, without a round trip over loopback HTTP. Nothing else is skipped: the event is
 * signed with the producer's key and verified by the hub, counted against the producer's quota and stored
 * once, exactly as over HTTP, and the answer is the status (and `Retry-After`) that route would give, so the
 * relay's rules for what to retry read it unchanged. A failure of the hub's database answers 503, as the
 * route does, and the relay tries again later.
 */
export const HubEventPublisherInProcess = (config: { readonly signingKey: Redacted.Redacted<string> }) =>
  Layer.effect(
    HubEventPublisher,
    Effect.gen(function* () {
      const ids = yield* IdGenerator
      const ingest = yield* EventIngest
      return HubEventPublisher.of({
        publish: Effect.fnUntraced(function* (event) {
          const body = Buffer.from(JSON.stringify(event), "utf8")
          const timestamp = Math.floor((yield* Clock.currentTimeMillis) / 1000)
          const delivery = {
            headers: {
              signature: sign({ secret: Redacted.value(config.signingKey), timestamp, payload: body }),
              timestamp: String(timestamp),
              eventId: event.id,
              delivery: yield* ids.next
            },
            body
          }
          return yield* ingest.ingest(delivery).pipe(
            Effect.map((outcome): HubAnswer => ({ status: outcome.status === "accepted" ? 202 : 200 })),
            Effect.catch((error) =>
              Effect.map(hubErrorResponse(error), (response): HubAnswer => ({
                status: response.status,
                retryAfter: response.headers["retry-after"]
              }))
            ),
            // The route answers a database outage 503 and any other failure 500: the relay retries both.
            Effect.catchDefect((defect) =>
              Effect.as(Effect.logWarning("the hub could not take an event; it will be retried", defect), {
                status: isConnectionFailure(defect) ? 503 : 500
              })
            )
          )
        })
      })
    })
  )
