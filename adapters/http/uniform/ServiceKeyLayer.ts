import { Effect, Layer, Redacted } from "effect"
import { checkStaticKey } from "../../../core/auth/StaticKey.ts"
import { errorResponse } from "../ErrorResponse.ts"
import { DecisionsServiceKey, TasksServiceKey } from "./ServiceKeyAuth.ts"

export interface ServiceKeyConfig {
  readonly key: Redacted.Redacted<string> | undefined
  readonly production: boolean
}

/** AUTH-1 check: 401 for a wrong or missing key; 503 in production when the key is unset (fail closed). */
const guard =
  (config: ServiceKeyConfig) =>
  <E, R>(httpEffect: Effect.Effect<any, E, R>, { credential }: { readonly credential: Redacted.Redacted<string> }) =>
    checkStaticKey({
      expected: config.key === undefined ? undefined : Redacted.value(config.key),
      presented: Redacted.value(credential),
      production: config.production
    }).pipe(
      Effect.matchEffect({
        onFailure: (error) =>
          Effect.succeed(
            error._tag === "NotConfigured"
              ? errorResponse("UNAVAILABLE", { message: "The service is not configured yet." })
              : errorResponse("UNAUTHORIZED")
          ),
        onSuccess: () => httpEffect
      })
    )

export const DecisionsServiceKeyLayer = (config: ServiceKeyConfig) =>
  Layer.succeed(DecisionsServiceKey)({ decisionsApiKey: guard(config) })

export const TasksServiceKeyLayer = (config: ServiceKeyConfig) =>
  Layer.succeed(TasksServiceKey)({ tasksApiKey: guard(config) })
