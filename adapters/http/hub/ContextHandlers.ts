import { Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { isContextCaller, type ContextKeys } from "../../../core/hub/ContextKeys.ts"
import { loadSubjectContext } from "../../../core/hub/SubjectContext.ts"
import { Directory } from "../../../core/hub/Directory.ts"
import { Registry } from "../../../core/hub/Registry.ts"
import { hubErrorResponse, errorResponse } from "../ErrorResponse.ts"
import { contextSignatureCheck } from "./ContextSignature.ts"
import { ContextSignatureAuth, CurrentContextCaller, SubjectContextApi } from "./ContextApi.ts"

export interface ContextAuthConfig {
  /** The parsed `HUB_CONTEXT_KEYS`; without keys every call answers 501. */
  readonly contextKeys: ContextKeys
  /** Per-caller quota; requests per minute, shared by every instance on the same rate-limit store. */
  readonly requestsPerMinute: number
}

/** AUTH-6 over the raw query string (adapters/http/hub/ContextSignature.ts); only the subject-context callers. */
const ContextSignatureAuthLayer = (config: ContextAuthConfig) =>
  Layer.effect(
    ContextSignatureAuth,
    Effect.map(
      contextSignatureCheck({
        contextKeys: config.contextKeys,
        requestsPerMinute: config.requestsPerMinute,
        budget: "hub.context",
        admits: isContextCaller,
        notConfigured: "The subject-context plane is not configured."
      }),
      (check) =>
        ContextSignatureAuth.of({
          contextSignature: (httpEffect, { credential }) =>
            Effect.flatMap(check(credential), (outcome) =>
              typeof outcome === "string" && isContextCaller(outcome)
                ? Effect.provideService(httpEffect, CurrentContextCaller, outcome)
                : Effect.succeed(typeof outcome === "string" ? errorResponse("UNAUTHORIZED") : outcome)
            )
        })
    )
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
