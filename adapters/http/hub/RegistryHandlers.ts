import { Effect, Layer } from "effect"
import { HttpEffect, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { authenticateApp, authorize } from "../../../core/hub/RegistryAuthorization.ts"
import { Directory } from "../../../core/hub/Directory.ts"
import { Registry } from "../../../core/hub/Registry.ts"
import { Limits } from "../../../core/kernel/index.ts"
import { domainErrorResponse, errorResponse } from "../ErrorResponse.ts"
import { makeRateLimiter } from "../RateLimiter.ts"
import { RegistryAuthorizeApi } from "./RegistryApi.ts"

export interface RegistryAuthorizeConfig {
  /** `PLATFORM_ISSUER`: the `iss` of the identity tokens the hub mints. */
  readonly issuer: string
  /** Per-app quota (document 1: "numeric values: not shown"); requests per minute, per server instance. */
  readonly requestsPerMinute: number
}

const authorizePath = /^\/api\/v1\/registry\/[^/?]*\/authorize\/?(\?|$)/

/**
 * Document 1: every answer of authorize carries `Cache-Control: no-store`, failures included, and an
 * oversized body is a 400 VALIDATION_ERROR ("invalid slug, JSON, body shape or size"), not the hub's usual
 * 413. A pre-response handler sees the final answer whoever built it (the handler, the envelope middleware,
 * the router), so both rules hold for every answer on the path, whatever the method.
 */
const authorizeAnswers = () =>
  HttpRouter.middleware(
    (httpEffect) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        if (authorizePath.test(request.url)) yield* HttpEffect.appendPreResponseHandler(answerPolicy)
        return yield* httpEffect
      }),
    { global: true }
  )

const answerPolicy = (_request: HttpServerRequest.HttpServerRequest, response: HttpServerResponse.HttpServerResponse) =>
  Effect.succeed(
    HttpServerResponse.setHeader(
      response.status === 413
        ? errorResponse("VALIDATION_ERROR", {
            message: `The request body must be at most ${Limits.Hub.registryAuthorizeBodyBytes} bytes.`,
            details: [{ in: "body", field: "", message: "too large" }]
          })
        : response,
      "cache-control",
      "no-store"
    )
  )

/**
 * The authorize route's answers. The token travels only from the decoded body into `authorize`: it is in
 * no log line and no error (the use case's failures carry fixed messages, a dependency's cause never sees
 * it), and a schema refusal of the body answers with a fixed message rather than the value.
 */
const registryAuthorizeGroup = (config: RegistryAuthorizeConfig) =>
  HttpApiBuilder.group(RegistryAuthorizeApi, "registryAuthorize", (handlers) =>
    Effect.gen(function* () {
      const directory = yield* Directory
      const registry = yield* Registry
      const limit = makeRateLimiter({ limit: config.requestsPerMinute, windowMs: 60_000 })
      return handlers.handle("authorize", ({ params, headers, payload }) =>
        Effect.gen(function* () {
          const app = yield* authenticateApp(params.slug, headers["x-workspace-api-key"])
          const wait = yield* limit(app.service.id)
          if (wait !== undefined) {
            return errorResponse("RATE_LIMITED", { headers: { "retry-after": String(wait) } })
          }
          return { data: yield* authorize({ issuer: config.issuer }, app, payload.token) }
        }).pipe(
          Effect.provideService(Directory, directory),
          Effect.provideService(Registry, registry),
          Effect.catch((error) => domainErrorResponse(error))
        )
      )
    })
  )

/**
 * `POST /api/v1/registry/{slug}/authorize`, with the path's answer policy (no-store, size as 400) installed
 * on the router. Needs `Directory` and `Registry`. A new layer per call: layers are memoized by identity.
 */
export const RegistryAuthorizeHandlers = (config: RegistryAuthorizeConfig) =>
  Layer.merge(registryAuthorizeGroup(config), authorizeAnswers())
