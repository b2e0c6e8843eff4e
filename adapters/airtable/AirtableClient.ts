import { Clock, Context, Data, Duration, Effect, Layer, Random, type Redacted, Schema } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { AirtableLimiter } from "./AirtableLimiter.ts"

/**
 * A request to Airtable's record API, under `/v0/`. `path` is made of path segments already encoded (a base id,
 * a table name through `encodeURIComponent`, a record id).
 */
export interface AirtableRequest {
  readonly method: "GET" | "POST" | "PATCH" | "DELETE"
  readonly path: string
  readonly urlParams?: ReadonlyArray<readonly [string, string]> | undefined
  readonly body?: unknown
  /**
   * Whether sending it twice does no harm (a read, an update to the same values): then a timeout or a lost
   * connection is retried too. A create is sent again only after an answer saying it was not made.
   */
  readonly idempotent: boolean
  /** Attempts of this request, when not the client's (a caller that retries on its own sends once). */
  readonly attempts?: number | undefined
}

/**
 * Airtable did not do what was asked. `status` is the answer's (0: no answer: a timeout or the connection;
 * 429 also when the base's turn was too far away to wait for), `type` the error type the body names.
 * The message is never Airtable's own words.
 */
export class AirtableFailure extends Data.TaggedError("AirtableFailure")<{
  readonly status: number
  readonly type: string | undefined
  readonly retryable: boolean
  readonly cause?: unknown
}> {}

export interface AirtableClientConfig {
  /** The API's origin, `https://api.airtable.com` unless pointed at another host (a local stand-in). */
  readonly endpointUrl: string
  /** Per request. Default 30 s. */
  readonly timeoutMillis?: number | undefined
  /** Attempts of a request meeting 502, 503, 504 or (when idempotent) no answer. Default 3. */
  readonly attempts?: number | undefined
}

/**
 * Airtable's record API, wrapped once: every request waits for its base's turn (AirtableLimiter.ts), a 429
 * pauses the base for every instance, 502/503/504 (and, for requests safe to repeat, 500, timeouts and lost
 * connections) are sent again after a jittered backoff, and every other refusal fails at once.
 */
export class AirtableClient extends Context.Service<
  AirtableClient,
  {
    readonly send: <A>(
      token: Redacted.Redacted<string>,
      baseId: string,
      request: AirtableRequest,
      answer: Schema.Decoder<A>
    ) => Effect.Effect<A, AirtableFailure>
  }
>()("adapters/airtable/AirtableClient") {}

/** `{"error": {"type"}}` or `{"error": "NOT_FOUND"}`: the type, if the body says one. */
const ErrorBody = Schema.Struct({
  error: Schema.Union([Schema.String, Schema.Struct({ type: Schema.optionalKey(Schema.String) })])
})
const errorTypeOf = (body: unknown): string | undefined => {
  const decoded = Schema.decodeUnknownOption(ErrorBody)(body)
  if (decoded._tag === "None") return undefined
  const error = decoded.value.error
  return typeof error === "string" ? error : error.type
}

/** `Retry-After` in seconds or as an HTTP date, as milliseconds from `now`. */
export const retryAfterMillis = (header: string | undefined, now: number): number | undefined => {
  if (header === undefined || header.trim() === "") return undefined
  const seconds = Number(header)
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000)
  const date = Date.parse(header)
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined
}

/** Full jitter: a random wait up to 250 ms doubled per attempt, at most 4 s. */
const backoff = (attempt: number) =>
  Effect.flatMap(Random.next, (r) => Effect.sleep(Math.round(r * Math.min(4_000, 250 * 2 ** attempt))))

export const makeAirtableClient = (config: AirtableClientConfig) =>
  Effect.gen(function* () {
    const http = yield* HttpClient.HttpClient
    const limiter = yield* AirtableLimiter
    const timeout = Duration.millis(config.timeoutMillis ?? 30_000)
    const attempts = Math.max(1, config.attempts ?? 3)
    const origin = config.endpointUrl.replace(/\/+$/, "")

    /** One request, sent once its turn comes: its status, headers and JSON body, or no answer. */
    const once = (token: Redacted.Redacted<string>, baseId: string, request: AirtableRequest) =>
      Effect.gen(function* () {
        yield* limiter
          .turn(baseId)
          .pipe(
            Effect.mapError((busy) => new AirtableFailure({ status: 429, type: "BUSY", retryable: true, cause: busy }))
          )
        let outgoing = HttpClientRequest.make(request.method)(`${origin}/v0/${request.path}`, {
          urlParams: request.urlParams ?? [],
          acceptJson: true
        }).pipe(HttpClientRequest.bearerToken(token))
        if (request.body !== undefined) outgoing = HttpClientRequest.bodyJsonUnsafe(outgoing, request.body)
        return yield* http.execute(outgoing).pipe(
          Effect.flatMap((response) =>
            Effect.map(
              Effect.orElseSucceed(response.json, () => undefined),
              (body) => ({ status: response.status, headers: response.headers, body }) as const
            )
          ),
          Effect.timeoutOrElse({
            duration: timeout,
            orElse: () => Effect.fail(new AirtableFailure({ status: 0, type: "TIMEOUT", retryable: true }))
          }),
          Effect.mapError((cause) =>
            cause instanceof AirtableFailure
              ? cause
              : new AirtableFailure({ status: 0, type: "NO_ANSWER", retryable: true, cause })
          )
        )
      })

    const send = <A>(
      token: Redacted.Redacted<string>,
      baseId: string,
      request: AirtableRequest,
      answer: Schema.Decoder<A>
    ): Effect.Effect<A, AirtableFailure> =>
      Effect.gen(function* () {
        for (let attempt = 1; ; attempt++) {
          const last = attempt >= Math.max(1, request.attempts ?? attempts)
          const outcome = yield* Effect.result(once(token, baseId, request))
          if (outcome._tag === "Failure") {
            const failure = outcome.failure
            if (failure.type === "BUSY" || last || !request.idempotent) return yield* failure
            yield* backoff(attempt)
            continue
          }
          const { status, headers, body } = outcome.success
          if (status >= 200 && status < 300) {
            return yield* Schema.decodeUnknownEffect(answer)(body).pipe(
              Effect.mapError(
                (cause) => new AirtableFailure({ status, type: "UNREADABLE_ANSWER", retryable: false, cause })
              )
            )
          }
          const type = errorTypeOf(body)
          const retryAfter = retryAfterMillis(headers["retry-after"], yield* Clock.currentTimeMillis)
          if (status === 429) {
            yield* limiter.pause(baseId, limiter.pauseAfter429(retryAfter))
            return yield* new AirtableFailure({ status, type, retryable: true })
          }
          const again = status === 502 || status === 503 || status === 504 || (status === 500 && request.idempotent)
          if (!again) return yield* new AirtableFailure({ status, type, retryable: status >= 500 })
          if (retryAfter !== undefined) yield* limiter.pause(baseId, retryAfter)
          if (last) return yield* new AirtableFailure({ status, type, retryable: true })
          yield* backoff(attempt)
        }
      })

    return AirtableClient.of({ send })
  })

/** The client over the `HttpClient` and the `AirtableLimiter` provided. */
export const AirtableClientLive = (
  config: AirtableClientConfig
): Layer.Layer<AirtableClient, never, HttpClient.HttpClient | AirtableLimiter> =>
  Layer.effect(AirtableClient, makeAirtableClient(config))
