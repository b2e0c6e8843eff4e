import { Effect, Option, Scope } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiScalar, OpenApi, type HttpApi, type HttpApiGroup } from "effect/http-api"
import { Limits, RateLimits } from "../../core/kernel/index.ts"
import { budgetRefusal } from "./RateLimits.ts"
import { errorResponse } from "./ErrorResponse.ts"
import { stringify } from "yaml"

export const openapiPath = "/api/v1/openapi"
export const docsPath = "/api/v1/docs"

/** The published contract carries its own version string, apart from the contract version `v1`. */
export const contractDocumentVersion = "1.0.0"

const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const

/** "workspaceRoles.assign" → "Assign (workspace roles)": the fallback summary of an undescribed operation. */
const humanize = (operationId: string): string => {
  const [group = "", name = operationId] = operationId.includes(".") ? operationId.split(".") : ["", operationId]
  const words = (text: string) => text.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase()
  const action = words(name)
  const head = `${action.charAt(0).toUpperCase()}${action.slice(1)}`
  return group === "" ? head : `${head} (${words(group)})`
}

/** The first sentence of a description, when it is short enough to be a summary. */
const firstSentence = (description: unknown): string | undefined => {
  if (typeof description !== "string") return undefined
  const sentence = description.split(/(?<=\.)\s/)[0]!.trim()
  return sentence.length > 0 && sentence.length <= 120 ? sentence.replace(/\.$/, "") : undefined
}

/**
 * The document without the bounds every integer gets from being a safe integer (±9007199254740991): they say
 * nothing a reader needs, on every integer. Bounds of the contract's own are kept.
 */
const withoutSafeIntegerBounds = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(withoutSafeIntegerBounds)
  if (typeof value !== "object" || value === null) return value
  const next: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) {
    if (key === "minimum" && item === Number.MIN_SAFE_INTEGER) continue
    if (key === "maximum" && item === Number.MAX_SAFE_INTEGER) continue
    next[key] = withoutSafeIntegerBounds(item)
  }
  return next
}

/**
 * What the published document adds to the generated one: its version; a server (the service itself, at the
 * address it was reached on); a summary for every operation (its description's first sentence, or its name);
 * each tag declared once, with each description once (several groups of a service may share a tag and its
 * description); no safe-integer bounds.
 */
const polish = (spec: OpenApi.OpenAPISpec): OpenApi.OpenAPISpec => {
  const paths: Record<string, unknown> = {}
  for (const [path, item] of Object.entries(spec.paths)) {
    const next: Record<string, unknown> = { ...item }
    for (const method of methods) {
      const operation = (item as Record<string, any>)[method]
      if (operation === undefined || typeof operation.summary === "string") continue
      next[method] = {
        ...operation,
        summary: firstSentence(operation.description) ?? humanize(String(operation.operationId ?? path))
      }
    }
    paths[path] = next
  }
  const tags = new Map<string, OpenApi.OpenAPISpecTag>()
  for (const tag of spec.tags ?? []) {
    const seen = tags.get(tag.name)
    const known = seen?.description === undefined ? [] : [seen.description]
    const added =
      tag.description === undefined || known.some((d) => d.includes(tag.description!)) ? [] : [tag.description]
    const description = [...known, ...added].join(" ")
    tags.set(tag.name, { ...seen, ...tag, ...(description === "" ? {} : { description }) })
  }
  return withoutSafeIntegerBounds({
    ...spec,
    info: { ...spec.info, version: contractDocumentVersion },
    servers:
      spec.servers !== undefined && spec.servers.length > 0
        ? spec.servers
        : [{ url: "/", description: "This service" }],
    paths: paths as OpenApi.OpenAPISpec["paths"],
    tags: [...tags.values()]
  }) as OpenApi.OpenAPISpec
}

/** The document as plain YAML (keys unquoted, strings quoted only where YAML needs it). */
export const documentYaml = (spec: OpenApi.OpenAPISpec): string => stringify(spec, { aliasDuplicateObjects: false })

/** The contract as published: the generated document with `polish` applied (also on the docs page). */
export const publishedApi = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
): HttpApi.HttpApi<Id, Groups> => api.annotate(OpenApi.Transform, (spec) => polish(spec as OpenApi.OpenAPISpec))

export const openApiDocument = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
): OpenApi.OpenAPISpec => OpenApi.fromApi(publishedApi(api))

/** `make`'s value, made on the first call and kept. */
const once = <A>(make: () => A): (() => A) => {
  let made: { readonly value: A } | undefined
  return () => (made ??= { value: make() }).value
}

const wantsYaml = (request: HttpServerRequest.HttpServerRequest, format: string | null) =>
  format === "yaml" || (format === null && (request.headers["accept"] ?? "").includes("application/yaml"))

/**
 * `GET /api/v1/openapi` (`format=json|yaml`, or `Accept: application/yaml`; no credential; at most 60 requests
 * a minute per client address) and beside it `/api/v1/docs`, the contract as a browsable page (effect's
 * Scalar page with its script bundled: no CDN).
 */
export const openApiRoutes = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
) =>
  HttpRouter.use(
    Effect.fnUntraced(function* (router) {
      // Made on the first request for each, not at start: the document and its YAML cost a quarter of a second of a
      // start's CPU, for a route few requests take.
      const spec = once(() => openApiDocument(api))
      const json = once(() => JSON.stringify(spec()))
      const yaml = once(() => documentYaml(spec()))
      const docs = docsPage(api)
      const limits = yield* RateLimits
      const budget = {
        name: `${api.identifier}.openapi`,
        limit: Limits.Hub.openapiRequestsPerMinute,
        windowMillis: 60_000,
        whenStoreFails: "local"
      } as const

      const throttled = (
        answer: (request: HttpServerRequest.HttpServerRequest) => HttpServerResponse.HttpServerResponse
      ) =>
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const client = Option.getOrElse(request.remoteAddress, () => "unknown")
          const refused = yield* budgetRefusal(limits, budget, client)
          return refused ?? answer(request)
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
            ? HttpServerResponse.text(yaml(), { contentType: "application/yaml" })
            : HttpServerResponse.text(json(), { contentType: "application/json" })
        })
      )
      yield* router.add("GET", docsPath, docs)
    })
  )

/**
 * The docs page calls nowhere but its own service: its script and styles are inline, and the browser refuses
 * anything from another origin (a font, an image, a request made from the page).
 */
const docsPolicy = [
  "default-src 'none'",
  "script-src 'unsafe-inline'",
  "style-src 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join("; ")

/**
 * The docs page: effect's Scalar page for the published contract, its script served inline (no CDN). The
 * script is large, so it is loaded on the first request of the page, not when the server starts.
 */
const docsPage = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) => {
  let page:
    Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, HttpServerRequest.HttpServerRequest> | undefined
  return Effect.gen(function* () {
    if (page === undefined) {
      const handler = yield* HttpRouter.toHttpEffect(
        HttpApiScalar.layer(publishedApi(api), {
          path: docsPath,
          // Scalar's own fonts come from its servers: the page uses the system's instead, and calls nowhere.
          scalar: { withDefaultFonts: false }
        })
      ).pipe(Scope.provide(Scope.makeUnsafe()))
      page = Effect.map(Effect.scoped(handler), (response) =>
        HttpServerResponse.setHeader(response, "content-security-policy", docsPolicy)
      )
    }
    return yield* page
  })
}
