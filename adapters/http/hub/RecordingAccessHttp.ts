import { Duration, Effect, Layer } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import {
  RecordingAccess,
  RecordingAccessRefused,
  RecordingAccessUnreachable
} from "../../../core/hub/RecordingGrants.ts"

/**
 * The recordings service over HTTP (Effect's HTTP client; the server gives it GuardedHttpClient, as for every call to a registered service): `POST {baseUrl}/api/v1/recordings/{recordingId}/access`
 * with the service's API key in its header and `{email, action}`. A 2xx is applied; any other answer is
 * RecordingAccessRefused; no answer within `timeoutMillis` (default 5 seconds) is RecordingAccessUnreachable.
 */
export const RecordingAccessHttp = (
  options: { readonly timeoutMillis?: number } = {}
): Layer.Layer<RecordingAccess, never, HttpClient.HttpClient> =>
  Layer.effect(
    RecordingAccess,
    Effect.gen(function* () {
      const client = yield* HttpClient.HttpClient
      return RecordingAccess.of({
        apply: (target, change) =>
          HttpClientRequest.post(
            `${target.baseUrl}/api/v1/recordings/${encodeURIComponent(change.recordingId)}/access`
          ).pipe(
            HttpClientRequest.acceptJson,
            HttpClientRequest.setHeader(target.apiKeyHeader.toLowerCase(), target.apiKey),
            HttpClientRequest.bodyJsonUnsafe({ email: change.email, action: change.action }),
            client.execute,
            Effect.timeout(Duration.millis(options.timeoutMillis ?? 5_000)),
            Effect.mapError((cause) => new RecordingAccessUnreachable({ cause })),
            Effect.flatMap((response) =>
              response.status >= 200 && response.status < 300
                ? Effect.void
                : Effect.fail(new RecordingAccessRefused({ status: response.status }))
            ),
            Effect.withSpan("RecordingAccessHttp.apply")
          )
      })
    })
  )
