import { Duration, Effect, Layer, Schema } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest, HttpClientResponse } from "effect/http"
import { ShortenFailed, Shortener } from "../../../core/hub/ShortLinks.ts"

export interface ShortenerHttpConfig {
  /** `HUB_SHORTENER_URL`: where addresses are sent to be shortened. */
  readonly url: string
  /** How long one call may take (default 3 seconds). */
  readonly timeoutMillis?: number | undefined
}

/** An absolute http(s) address of at most 2048 characters. */
const ShortUrl = Schema.String.check(
  Schema.makeFilter((text: string) => {
    if (text.length > 2048) return "must be at most 2048 characters"
    try {
      const url = new URL(text)
      return url.protocol === "https:" || url.protocol === "http:" || "must be an http(s) address"
    } catch {
      return "must be an absolute address"
    }
  })
)

const Answer = Schema.Struct({ data: Schema.Struct({ url: ShortUrl }) })

/**
 * An external link shortener over HTTP (Effect's HTTP client): `POST <url>` with `{"url": "<long address>"}`,
 * answered `{"data": {"url": "<short address>"}}` with a 2xx. Anything else, or no answer in time, is
 * ShortenFailed (and the caller gets the long address).
 */
export const ShortenerHttp = (config: ShortenerHttpConfig): Layer.Layer<Shortener> =>
  Layer.effect(
    Shortener,
    Effect.gen(function* () {
      const client = (yield* HttpClient.HttpClient).pipe(HttpClient.filterStatusOk)
      return Shortener.of({
        shorten: (url: string) =>
          HttpClientRequest.post(config.url).pipe(
            HttpClientRequest.acceptJson,
            HttpClientRequest.bodyJsonUnsafe({ url }),
            client.execute,
            Effect.flatMap(HttpClientResponse.schemaBodyJson(Answer)),
            Effect.map((answer) => answer.data.url),
            Effect.timeout(Duration.millis(config.timeoutMillis ?? 3_000)),
            Effect.mapError((cause) => new ShortenFailed({ cause })),
            Effect.withSpan("ShortenerHttp.shorten")
          )
      })
    })
  ).pipe(Layer.provide(FetchHttpClient.layer))
