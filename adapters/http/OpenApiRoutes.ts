import { Clock, Effect, Option } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { OpenApi, type HttpApi, type HttpApiGroup } from "effect/http-api"
import { Limits, takeHit } from "../../core/kernel/index.ts"
import { renderDocsPage } from "./DocsPage.ts"
import { errorResponse } from "./ErrorResponse.ts"
import { toYaml } from "./Yaml.ts"

export const openapiPath = "/api/v1/openapi"
export const docsPath = "/api/v1/docs"

/** Document 1, "Versioning" 3: the published contract carries its own version string. */
export const contractDocumentVersion = "1.0.0"

export const openApiDocument = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
): OpenApi.OpenAPISpec => {
  const spec = OpenApi.fromApi(api)
  return { ...spec, info: { ...spec.info, version: contractDocumentVersion } }
}

const wantsYaml = (request: HttpServerRequest.HttpServerRequest, format: string | null) =>
  format === "yaml" || (format === null && (request.headers["accept"] ?? "").includes("application/yaml"))

/**
 * `GET /api/v1/openapi` (`format=json|yaml`, or `Accept: application/yaml`) and a docs page beside it.
 * No credential; at most 60 requests a minute per client address (document 1, "Limits").
 */
export const openApiRoutes = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
) =>
  HttpRouter.use(
    Effect.fnUntraced(function* (router) {
      const spec = openApiDocument(api)
      const json = JSON.stringify(spec)
      const yaml = toYaml(spec)
      const docs = renderDocsPage(spec, openapiPath)
      const hitsByClient = new Map<string, ReadonlyArray<number>>()
      const rule = { limit: Limits.Hub.openapiRequestsPerMinute, windowMs: 60_000 }

      const throttled = <E, R>(
        answer: (request: HttpServerRequest.HttpServerRequest) => HttpServerResponse.HttpServerResponse
      ) =>
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const now = yield* Clock.currentTimeMillis
          const client = Option.getOrElse(request.remoteAddress, () => "unknown")
          const decision = takeHit(hitsByClient.get(client) ?? [], now, rule)
          hitsByClient.set(client, decision.hits)
          if (hitsByClient.size > 10_000) hitsByClient.clear()
          if (!decision.allowed) {
            return errorResponse("RATE_LIMITED", { headers: { "retry-after": String(decision.retryAfterSeconds) } })
          }
          return answer(request)
        })

      yield* router.add(
        "GET",
        openapiPath,
        throttled((request) => {
          const format = new URL(request.url, "http://local").searchParams.get("format")
          if (format !== null && format !== "json" && format !== "yaml") {
            return errorResponse("VALIDATION_ERROR", {
              details: [{ in: "query", field: "format", message: "must be json or yaml" }]
            })
          }
          return wantsYaml(request, format)
            ? HttpServerResponse.text(yaml, { contentType: "application/yaml" })
            : HttpServerResponse.text(json, { contentType: "application/json" })
        })
      )
      yield* router.add(
        "GET",
        docsPath,
        throttled(() => HttpServerResponse.html(docs))
      )
    })
  )
