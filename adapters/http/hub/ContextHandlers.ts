import { Clock, Effect, Layer, Redacted } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { verify } from "../../../core/auth/Signature.ts"
import { isContextCaller, type ContextKeys } from "../../../core/hub/ContextKeys.ts"
import { loadSubjectContext } from "../../../core/hub/SubjectContext.ts"
import { Directory } from "../../../core/hub/Directory.ts"
import { Registry } from "../../../core/hub/Registry.ts"
import { hubErrorResponse, errorResponse } from "../ErrorResponse.ts"
import { RateLimits } from "../../../core/kernel/RateLimit.ts"
import { budgetRefusal } from "../RateLimits.ts"
import { ContextSignatureAuth, CurrentContextCaller, SubjectContextApi } from "./ContextApi.ts"

export interface ContextAuthConfig {
  /** The parsed `HUB_CONTEXT_KEYS`; without keys every call answers 501. */
  readonly contextKeys: ContextKeys
  /** Per-caller quota; requests per minute, shared by every instance on the same rate-limit store. */
  readonly requestsPerMinute: number
}

/** Everything after the first `?`, byte for byte as the caller sent it: exactly what the caller signed. */
export const rawQueryString = (url: string): string => {
  const at = url.indexOf("?")
  return at < 0 ? "" : url.slice(at + 1)
}

/**
 * AUTH-6. Every refusal (no or bad signature, stale or future timestamp, missing headers, a caller that is
 * not in the enum or has no key) is the same 401, built by the same call, so the bytes give nothing away
 *. The quota is counted only for a verified caller, so nobody can spend
 * another caller's share.
 */
const ContextSignatureAuthLayer = (config: ContextAuthConfig) =>
  Layer.effect(
    ContextSignatureAuth,
    Effect.gen(function* () {
      const limits = yield* RateLimits
      const budget = {
        name: "hub.context",
        limit: config.requestsPerMinute,
        windowMillis: 60_000,
        whenStoreFails: "local"
      } as const
      return ContextSignatureAuth.of({
        contextSignature: (httpEffect, { credential }) =>
          Effect.gen(function* () {
            if (!config.contextKeys.configured) {
              return errorResponse("NOT_CONFIGURED", { message: "The subject-context plane is not configured." })
            }
            const request = yield* HttpServerRequest.HttpServerRequest
            const caller = request.headers["x-workspace-service-id"] ?? ""
            const nowSeconds = Math.floor((yield* Clock.currentTimeMillis) / 1000)
            if (
              !isContextCaller(caller) ||
              !verify({
                secret: config.contextKeys.keyFor(caller),
                timestamp: request.headers["x-platform-timestamp"],
                signature: Redacted.value(credential),
                payload: rawQueryString(request.url),
                nowSeconds
              })
            ) {
              return errorResponse("UNAUTHORIZED")
            }
            const refused = yield* budgetRefusal(limits, budget, caller)
            if (refused !== undefined) return refused
            return yield* Effect.provideService(httpEffect, CurrentContextCaller, caller)
          })
      })
    })
  )

const subjectContextGroup = () =>
  HttpApiBuilder.group(SubjectContextApi, "subjectContext", (handlers) =>
    Effect.gen(function* () {
      const directory = yield* Directory
      const registry = yield* Registry
      return handlers.handle("get", ({ query }) =>
        Effect.gen(function* () {
          const caller = yield* CurrentContextCaller
          return { data: yield* loadSubjectContext(caller, query.email) }
        }).pipe(
          Effect.provideService(Directory, directory),
          Effect.provideService(Registry, registry),
          Effect.catch(hubErrorResponse)
        )
      )
    })
  )

/**
 * `GET /api/v1/subject-context` with its AUTH-6 middleware. Needs `Directory` and `Registry`. A new layer
 * per call: layers are memoized by identity, so a module-level one would be shared by every server built.
 */
export const SubjectContextHandlers = (config: ContextAuthConfig) =>
  subjectContextGroup().pipe(Layer.provide(ContextSignatureAuthLayer(config)))
