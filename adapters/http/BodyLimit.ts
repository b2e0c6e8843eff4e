import { Context, Option } from "effect"
import { FindMyWay } from "effect/http"
import { HttpApi, type HttpApiGroup } from "effect/http-api"
import { routerConfig } from "./RequestTarget.ts"

/**
 * A route's own request-body limit in bytes, as an endpoint annotation:
 * `HttpApiEndpoint.post(...).annotate(MaxBodyBytes, 8 * 1024)`. Routes without one get the service's.
 */
export class MaxBodyBytes extends Context.Service<MaxBodyBytes, number>()("adapters/http/MaxBodyBytes") {}

/** A contract's per-route limits, matched exactly as the service's router matches its routes. */
export interface RouteLimits {
  readonly find: (method: string, url: string) => number | undefined
}

/** The per-route limits a contract declares, read once when the service starts. */
export const routeLimits = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
): RouteLimits => {
  const router = FindMyWay.make<number>(routerConfig)
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, mergedAnnotations }) => {
      const bytes = Context.getOption(mergedAnnotations, MaxBodyBytes)
      if (Option.isSome(bytes)) router.on(endpoint.method, endpoint.path as FindMyWay.PathInput, bytes.value)
    }
  })
  return { find: (method, url) => router.find(method, url)?.handler }
}

/** The limit for a request: its route's, else the service's. */
export const limitFor = (limits: RouteLimits | undefined, fallback: number, method: string, url: string): number =>
  limits?.find(method, url) ?? fallback
