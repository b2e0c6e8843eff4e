import { Duration, Effect, Layer, Schema } from "effect"
import { HttpClient, HttpClientRequest, HttpClientResponse } from "effect/http"
import { ServiceReadFailed, ServiceReads } from "../../../core/hub/ServiceReads.ts"

const Envelope = Schema.Struct({ data: Schema.Unknown })

/**
 * A registered service's uniform reads over HTTP (Effect's HTTP client; the server gives it GuardedHttpClient, as for every call to a registered service): `GET {baseUrl}{path}?{query}` with its
 * API key in its header and the identity token in `X-Workspace-Token`. Anything but a 200 whose body is
 * `{data: ...}` within `timeoutMillis` (default 5 seconds) is ServiceReadFailed.
 */
export const ServiceReadsHttp = (
  options: { readonly timeoutMillis?: number } = {}
): Layer.Layer<ServiceReads, never, HttpClient.HttpClient> =>
  Layer.effect(
    ServiceReads,
    Effect.gen(function* () {
      const client = (yield* HttpClient.HttpClient).pipe(HttpClient.filterStatusOk)
      return ServiceReads.of({
        read: (target, path, query) =>
          HttpClientRequest.get(`${target.baseUrl}${path}`).pipe(
            HttpClientRequest.setUrlParams(query),
            HttpClientRequest.acceptJson,
            HttpClientRequest.setHeader(target.apiKeyHeader.toLowerCase(), target.apiKey),
            HttpClientRequest.setHeader("x-workspace-token", target.token),
            client.execute,
            Effect.flatMap(HttpClientResponse.schemaBodyJson(Envelope)),
            Effect.map((envelope) => envelope.data),
            Effect.timeout(Duration.millis(options.timeoutMillis ?? 5_000)),
            Effect.mapError((cause) => new ServiceReadFailed({ cause })),
            Effect.withSpan("ServiceReadsHttp.read")
          )
      })
    })
  )
