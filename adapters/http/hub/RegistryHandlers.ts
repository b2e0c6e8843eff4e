import { Effect, Layer, Predicate } from "effect"
import { HttpEffect, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { authenticateApp, authorize } from "../../../core/hub/RegistryAuthorization.ts"
import { Directory } from "../../../core/hub/Directory.ts"
import { Registry } from "../../../core/hub/Registry.ts"
import { Limits } from "../../../core/kernel/index.ts"
import { hubErrorResponse, errorResponse } from "../ErrorResponse.ts"
import { RateLimits } from "../../../core/kernel/RateLimit.ts"
import { budgetRefusal } from "../RateLimits.ts"
import { RegistryAuthorizeApi } from "./RegistryApi.ts"

export interface RegistryAuthorizeConfig {
  /** `PLATFORM_ISSUER`: the `iss` of the identity tokens the hub mints. */
  readonly issuer: string
  /** Per-app quota; requests per minute, shared by every instance on the same rate-limit store. */
  readonly requestsPerMinute: number
}

/**
 * Everything under `/api/v1/registry`, not only the exact route: an answer to a path of the wrong shape
 * (an extra segment, a missing slug) is still an answer a caller of authorize may see, and must not be cached.
 */
const authorizePath = /^\/api\/v1\/registry(\/|\?|$)/

/**
 * Every answer of authorize carries `Cache-Control: no-store`, failures included, and its only
 * refusal of a request's form is 400 VALIDATION_ERROR ("invalid slug, JSON, body shape or size"): an
 * oversized body (the hub's usual 413), a body that is not JSON (elsewhere INVALID_JSON) and a body that is
 * not declared JSON (415) all answer that. A pre-response handler sees the final answer whoever built it
 * (the handler, the envelope middleware, the router), so both rules hold for every answer under the path,
 * whatever the method or shape.
 */
const authorizeAnswers = () =>
  HttpRouter.middleware(
    (httpEffect) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
        authorizePath.test(request.url) ? HttpEffect.withPreResponseHandler(httpEffect, answerPolicy) : httpEffect
      ),
    { global: true }
  )

/** The envelope's error code of an answer built in this process, if it has one. */
const errorCodeOf = (response: HttpServerResponse.HttpServerResponse): string | undefined => {
  if (response.body._tag !== "Uint8Array") return undefined
  try {
    const body: unknown = JSON.parse(new TextDecoder().decode(response.body.body))
    const error = Predicate.isObject(body) && Object.hasOwn(body, "error") ? body["error"] : undefined
    const code = Predicate.isObject(error) && Object.hasOwn(error, "code") ? error["code"] : undefined
    return typeof code === "string" ? code : undefined
  } catch {
    return undefined
  }
}

const asValidationError = (response: HttpServerResponse.HttpServerResponse): HttpServerResponse.HttpServerResponse => {
  if (response.status === 413) {
    return errorResponse("VALIDATION_ERROR", {
      message: `The request body must be at most ${Limits.Hub.registryAuthorizeBodyBytes} bytes.`,
      details: [{ in: "body", field: "", message: "too large" }]
    })
  }
  if (response.status === 415 || (response.status === 400 && errorCodeOf(response) === "INVALID_JSON")) {
    return errorResponse("VALIDATION_ERROR", {
      message: "The request body must be a JSON object.",
      details: [{ in: "body", field: "", message: "not JSON" }]
    })
  }
  return response
}

const answerPolicy = (_request: HttpServerRequest.HttpServerRequest, response: HttpServerResponse.HttpServerResponse) =>
  Effect.succeed(HttpServerResponse.setHeader(asValidationError(response), "cache-control", "no-store"))

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
      const limits = yield* RateLimits
      const budget = {
        name: "hub.registry",
        limit: config.requestsPerMinute,
        windowMillis: 60_000,
        whenStoreFails: "local"
      } as const
      return handlers.handle("authorize", ({ params, headers, payload }) =>
        Effect.gen(function* () {
          const app = yield* authenticateApp(params.slug, headers["x-workspace-api-key"])
          const refused = yield* budgetRefusal(limits, budget, app.service.id)
          if (refused !== undefined) return refused
          return { data: yield* authorize({ issuer: config.issuer }, app, payload.token) }
        }).pipe(
          Effect.provideService(Directory, directory),
          Effect.provideService(Registry, registry),
          Effect.catch(hubErrorResponse)
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
