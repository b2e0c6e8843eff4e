import { Effect, Layer } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import {
  fingerprintRequest,
  IdempotencyConflict,
  IdempotencyInProgress,
  runIdempotent,
  validateIdempotencyKey,
  type RunIdempotentOptions
} from "../../core/idempotency/Idempotency.ts"
import { IdempotencyStore, type KeptResponse } from "../../core/idempotency/IdempotencyStore.ts"
import { domainErrorResponse, type CodeDialect } from "./ErrorResponse.ts"
import { IdempotencyOptional, IdempotencyRequired, IdempotencyScope } from "./IdempotencyMiddleware.ts"

const decoder = new TextDecoder()

/** The bytes a client receives, to keep; a streamed or multipart body is not kept (answered as is). */
const keep = (response: HttpServerResponse.HttpServerResponse): KeptResponse | undefined => {
  const body = response.body
  const contentType = response.headers["content-type"] ?? "application/json"
  switch (body._tag) {
    case "Empty":
      return { status: response.status, contentType, body: "" }
    case "Uint8Array":
      return { status: response.status, contentType: body.contentType, body: body.text ?? decoder.decode(body.body) }
    case "Raw":
      return typeof body.body === "string" ? { status: response.status, contentType, body: body.body } : undefined
    default:
      return undefined
  }
}

const replay = (kept: KeptResponse) =>
  kept.body === ""
    ? HttpServerResponse.empty({ status: kept.status })
    : HttpServerResponse.text(kept.body, { status: kept.status, contentType: kept.contentType })

class NotKeepable {
  readonly _tag = "NotKeepable"
  constructor(readonly response: HttpServerResponse.HttpServerResponse) {}
}

/**
 * Document 1 and issue 2: a mutation with `Idempotency-Key` runs once per (caller, key); a replay answers
 * the kept status and body unchanged; the same key with another request is `idempotency_conflict` (409);
 * a duplicate arriving while the first runs waits for it, or answers 409 `idempotency_in_progress`.
 * The fingerprint covers caller, method, path (with query) and the raw body.
 */
const guard =
  (required: boolean, dialect: CodeDialect, options: RunIdempotentOptions, store: IdempotencyStore["Service"]) =>
  <E, R>(httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const header = request.headers["idempotency-key"]
      if (header === undefined) {
        if (!required) return yield* httpEffect
        return yield* domainErrorResponse(
          {
            _tag: "ValidationError",
            message: "This request needs an Idempotency-Key header.",
            details: [{ in: "header", field: "Idempotency-Key", message: "is required" }]
          },
          dialect
        )
      }
      const key = yield* Effect.result(validateIdempotencyKey(header))
      if (key._tag === "Failure") return yield* domainErrorResponse(key.failure, dialect)
      const scope = yield* IdempotencyScope
      const body = yield* Effect.orElseSucceed(request.text, () => "")
      const fingerprint = fingerprintRequest({ caller: scope, method: request.method, path: request.url, body })
      const outcome = yield* runIdempotent(
        { scope, key: key.success, fingerprint },
        Effect.flatMap(httpEffect, (response) => {
          const kept = keep(response)
          return kept === undefined ? Effect.fail(new NotKeepable(response)) : Effect.succeed(kept)
        }),
        options
      ).pipe(
        Effect.map(replay),
        // Only this middleware's own outcomes are answered here; anything else (schema failures of the
        // request, defects) goes on to the router's error envelope unchanged.
        Effect.catch((error) =>
          error instanceof NotKeepable
            ? Effect.succeed(error.response)
            : error instanceof IdempotencyConflict || error instanceof IdempotencyInProgress
              ? domainErrorResponse(error, dialect)
              : Effect.fail(error)
        ),
        Effect.provideService(IdempotencyStore, store)
      )
      return outcome
    })

export const IdempotencyLayers = (options: { readonly dialect: CodeDialect } & RunIdempotentOptions) =>
  Layer.effect(
    IdempotencyRequired,
    Effect.map(IdempotencyStore, (store) => IdempotencyRequired.of(guard(true, options.dialect, options, store)))
  ).pipe(
    Layer.merge(
      Layer.effect(
        IdempotencyOptional,
        Effect.map(IdempotencyStore, (store) => IdempotencyOptional.of(guard(false, options.dialect, options, store)))
      )
    )
  )
