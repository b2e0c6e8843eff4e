import { Duration, Effect, Layer, Redacted } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest, HttpClientResponse } from "effect/http"
import { ExpertRoster, RosterAnswer, RosterUnavailable } from "../../../core/hub/ExpertRoster.ts"

export interface ExpertRosterHttpConfig {
  /** `HUB_EXPERT_ROSTER_URL`: the expert-sessions roster, read with GET. */
  readonly url: string
  /** `HUB_EXPERT_ROSTER_KEY`: sent as the `internalauthorization` header. */
  readonly key: Redacted.Redacted<string>
  /** How long one read may take (default 5 seconds). */
  readonly timeoutMillis?: number | undefined
}

/**
 * The expert-sessions roster over HTTP (Effect's HTTP client): `GET <url>` with the internal key in
 * `internalauthorization`. Anything but a 200 with `{data: {clients: [...]}}` within the time allowed is
 * RosterUnavailable, the cause kept for the log and never shown.
 */
export const ExpertRosterHttp = (config: ExpertRosterHttpConfig): Layer.Layer<ExpertRoster> =>
  Layer.effect(
    ExpertRoster,
    Effect.gen(function* () {
      const client = (yield* HttpClient.HttpClient).pipe(HttpClient.filterStatusOk)
      const request = HttpClientRequest.get(config.url).pipe(
        HttpClientRequest.acceptJson,
        HttpClientRequest.setHeader("internalauthorization", Redacted.value(config.key))
      )
      return ExpertRoster.of({
        clients: client.execute(request).pipe(
          Effect.flatMap(HttpClientResponse.schemaBodyJson(RosterAnswer)),
          Effect.map((answer) => answer.data.clients),
          Effect.timeout(Duration.millis(config.timeoutMillis ?? 5_000)),
          Effect.mapError((cause) => new RosterUnavailable({ cause })),
          Effect.withSpan("ExpertRosterHttp.clients")
        )
      })
    })
  ).pipe(Layer.provide(FetchHttpClient.layer))
