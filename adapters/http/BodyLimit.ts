import { Context, Option } from "effect"
import { HttpApi, type HttpApiGroup } from "effect/http-api"

/**
 * A route's own request-body limit in bytes, as an endpoint annotation:
 * `HttpApiEndpoint.post(...).annotate(MaxBodyBytes, 8 * 1024)`. Routes without one get the service's.
 */
export class MaxBodyBytes extends Context.Service<MaxBodyBytes, number>()("adapters/http/MaxBodyBytes") {}

export interface RouteLimit {
  readonly method: string
  readonly pattern: RegExp
  readonly bytes: number
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** `/api/v1/registry/:slug/authorize` as a regular expression over the request path. */
const toPattern = (path: string) =>
  new RegExp(
    `^${path
      .split("/")
      .map((segment) => (segment.startsWith(":") ? "[^/]+" : escape(segment)))
      .join("/")}/?$`
  )

/** The per-route limits a contract declares, read once when the service starts. */
export const routeLimits = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
): ReadonlyArray<RouteLimit> => {
  const limits: Array<RouteLimit> = []
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, mergedAnnotations }) => {
      const bytes = Context.getOption(mergedAnnotations, MaxBodyBytes)
      if (Option.isSome(bytes)) {
        limits.push({ method: endpoint.method, pattern: toPattern(endpoint.path), bytes: bytes.value })
      }
    }
  })
  return limits
}

/** The limit for a request: its route's, else the service's. */
export const limitFor = (limits: ReadonlyArray<RouteLimit>, fallback: number, method: string, url: string): number => {
  const path = url.split("?")[0]!
  return limits.find((limit) => limit.method === method && limit.pattern.test(path))?.bytes ?? fallback
}
