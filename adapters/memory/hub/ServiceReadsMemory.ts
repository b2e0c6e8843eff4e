import { Effect, Layer } from "effect"
import { ServiceReadFailed, ServiceReads } from "../../../core/hub/ServiceReads.ts"

/**
 * Registered services' reads in memory: `answer` gives the `data` a service at `baseUrl` answers to a path and
 * query for the person of the token, or undefined for a service that does not answer.
 */
export const ServiceReadsMemory = (
  answer: (request: {
    readonly baseUrl: string
    readonly path: string
    readonly query: Readonly<Record<string, string>>
    readonly apiKey: string
    readonly token: string
  }) => unknown
): Layer.Layer<ServiceReads> =>
  Layer.succeed(
    ServiceReads,
    ServiceReads.of({
      read: (target, path, query) =>
        Effect.suspend(() => {
          const data = answer({ baseUrl: target.baseUrl, path, query, apiKey: target.apiKey, token: target.token })
          return data === undefined ? Effect.fail(new ServiceReadFailed({})) : Effect.succeed(data)
        })
    })
  )
