import { Effect, Layer } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import {
  fingerprintRequest,
  IdempotencyConflict,
  IdempotencyUnavailable,
  runIdempotent,
  validateIdempotencyKey,
  type RunIdempotentOptions
} from "../../core/idempotency/Idempotency.ts"
import { IdempotencyStore, type KeptResponse } from "../../core/idempotency/IdempotencyStore.ts"
import { Transactions } from "../../core/kernel/Transactions.ts"
import { envelopeRenderer } from "./ErrorEnvelopeMiddleware.ts"
import type { ErrorRenderer } from "./ErrorResponse.ts"
import { validationCode, type CodeDialect } from "./ErrorResponse.ts"
import {
  IdempotencyCreate,
  IdempotencyOptional,
  IdempotencyRequired,
  IdempotencyScope
} from "./IdempotencyMiddleware.ts"

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

export interface IdempotencyLayersOptions extends RunIdempotentOptions {
  readonly dialect: CodeDialect
  /** How the service renders its error bodies (the envelope unless it has its own shape). */
  readonly render?: ErrorRenderer | undefined
  /**
   * The routes marked `IdempotencyCreate` may share their transactions (`Transactions.shared`): only where
   * everything they write is in the service's own database, so that a group undone and run again repeats
   * nothing outside it. Otherwise they are `IdempotencyOptional` routes.
   */
  readonly sharedCreates?: boolean | undefined
}

/** What a route's middleware asks of the key, and whether its unit may share its transaction. */
type Mode = "required" | "optional" | "create"

/** Busy keys of the shared units without an `Idempotency-Key`: one of their own each (never `scope\nkey`). */
let unkeyed = 0

/**
 * Every mutation is one unit of work (core/kernel/Transactions.ts). With `Idempotency-Key` it runs once
 * per (caller, key), its claim, change, outbox rows and kept response committing together; a replay answers
 * the kept status and body unchanged; the same key with another request is a 409 conflict; a duplicate
 * arriving while the first runs waits for it and gets its response. The fingerprint covers caller, method,
 * path (with query) and the raw body.
 */
const guard = (
  mode: Mode,
  options: IdempotencyLayersOptions,
  store: IdempotencyStore["Service"],
  transactions: Transactions["Service"]
) => {
  const required = mode === "required"
  // A mutation that requires a key is a create (a decision, a template's raise): it may share its transaction.
  const shared = required || (mode === "create" && options.sharedCreates === true)
  const runOptions: RunIdempotentOptions = shared ? { ...options, shared: true } : options
  const unit = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    shared ? transactions.shared(`unkeyed:${++unkeyed}`, effect) : transactions.atomically(effect)
  return <E, R>(httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const render = options.render ?? envelopeRenderer
      const validation = validationCode(options.dialect)
      const header = request.headers["idempotency-key"]
      if (header === undefined) {
        if (!required) return yield* unit(httpEffect)
        return render(request, {
          code: validation,
          message: "This request needs an Idempotency-Key header.",
          details: [{ in: "header", field: "Idempotency-Key", message: "is required" }]
        })
      }
      const key = yield* Effect.result(validateIdempotencyKey(header))
      if (key._tag === "Failure") {
        return render(request, { code: validation, message: key.failure.message, details: key.failure.details })
      }
      const scope = yield* IdempotencyScope
      const body = yield* Effect.orElseSucceed(request.text, () => "")
      const fingerprint = fingerprintRequest({ caller: scope, method: request.method, path: request.url, body })
      return yield* runIdempotent(
        { scope, key: key.success, fingerprint },
        Effect.flatMap(httpEffect, (response) => {
          const kept = keep(response)
          return kept === undefined ? Effect.fail(new NotKeepable(response)) : Effect.succeed(kept)
        }),
        runOptions
      ).pipe(
        Effect.map(replay),
        // Only this middleware's own outcomes are answered here; anything else (schema failures of the
        // request, defects) goes on to the router's error envelope unchanged.
        Effect.catch((error) =>
          error instanceof NotKeepable
            ? Effect.succeed(error.response)
            : error instanceof IdempotencyConflict
              ? Effect.succeed(
                  render(request, {
                    code: options.dialect === "decisions" ? "idempotency_conflict" : "CONFLICT",
                    message: "The Idempotency-Key was already used for a different request."
                  })
                )
              : error instanceof IdempotencyUnavailable
                ? Effect.succeed(
                    render(request, {
                      code: "UNAVAILABLE",
                      message: "The service is not configured for repeatable requests yet."
                    })
                  )
                : Effect.fail(error)
        ),
        Effect.provideService(IdempotencyStore, store),
        Effect.provideService(Transactions, transactions)
      )
    })
}

/** The idempotency middlewares of a service; they need its IdempotencyStore and Transactions. */
export const IdempotencyLayers = (options: IdempotencyLayersOptions) => {
  const make = (mode: Mode) =>
    Effect.gen(function* () {
      return guard(mode, options, yield* IdempotencyStore, yield* Transactions)
    })
  return Layer.mergeAll(
    Layer.effect(IdempotencyRequired, Effect.map(make("required"), IdempotencyRequired.of)),
    Layer.effect(IdempotencyOptional, Effect.map(make("optional"), IdempotencyOptional.of)),
    Layer.effect(IdempotencyCreate, Effect.map(make("create"), IdempotencyCreate.of))
  )
}
