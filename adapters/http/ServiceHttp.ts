import { NodeHttpServer, type NodeServices } from "@effect/platform-node"
import { Context, Deferred, Effect, Layer, type FileSystem, type LogLevel, type Path } from "effect"
import {
  HttpRouter,
  HttpServerRequest,
  type Etag,
  type HttpPlatform,
  type HttpServerError,
  type HttpServerResponse
} from "effect/http"
import { HttpApiBuilder, type HttpApi, type HttpApiGroup } from "effect/http-api"
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { Duplex } from "node:stream"
import { envelopeRenderer, errorEnvelopeMiddleware, type ErrorEnvelopeOptions } from "./ErrorEnvelopeMiddleware.ts"
import { canonicalHostRedirect } from "./CanonicalHost.ts"
import { routeLimits } from "./BodyLimit.ts"
import { requestLog } from "./RequestLog.ts"
import { validationCode, type CodeDialect, type ErrorRenderer } from "./ErrorResponse.ts"
import { openApiRoutes } from "./OpenApiRoutes.ts"
import { canonicalTarget, routerConfig } from "./RequestTarget.ts"

/**
 * One service's routes: its HttpApi contract with handlers, the OpenAPI document and docs page generated
 * from that contract (or from `document`, a contract that holds it and more), and the router-wide error
 * envelope.
 */
export const serviceRoutes = <
  Id extends string,
  Groups extends HttpApiGroup.Constraint,
  E,
  R,
  DocumentId extends string = Id,
  DocumentGroups extends HttpApiGroup.Constraint = Groups
>(options: {
  readonly api: HttpApi.HttpApi<Id, Groups>
  readonly handlers: Layer.Layer<HttpApiGroup.ToService<Id, Groups>, E, R>
  readonly errors: ErrorEnvelopeOptions
  readonly document?: HttpApi.HttpApi<DocumentId, DocumentGroups> | undefined
}) =>
  Layer.mergeAll(
    HttpApiBuilder.layer(options.api).pipe(Layer.provide(options.handlers)),
    options.document === undefined ? openApiRoutes(options.api) : openApiRoutes(options.document),
    errorEnvelopeMiddleware({ ...options.errors, routeLimits: routeLimits(options.api) })
  )

/**
 * A group's handlers built apart from the services around them. `HttpApiBuilder.group` keeps the services it
 * was built with and adds them to the context of each of the group's requests, a copy of the server's
 * services per request. A group whose handlers take what they use while `make` runs, and whose endpoints
 * have no middleware, is built here seeing none: its requests are given nothing more than the server's own.
 */
export const isolatedHandlers = <A, E, R>(make: Effect.Effect<Layer.Layer<A, E>, never, R>): Layer.Layer<A, E, R> =>
  Layer.effectContext(
    Effect.gen(function* () {
      const handlers = yield* make
      const scope = yield* Effect.scope
      return yield* Effect.updateContext(Layer.buildWithScope(handlers, scope), (_: Context.Context<never>) =>
        Context.empty()
      )
    })
  )

export interface ListenOptions {
  /** The service's id: every log line of a request names it (see `requestLog`). */
  readonly service: string
  readonly port: number
  readonly host: string
  /** How long in-flight requests may take to finish on shutdown. */
  readonly drainMillis?: number
  /** How the service renders an error body (the envelope unless given): for answers made before routing. */
  readonly render?: ErrorRenderer | undefined
  /** The spelling of its error codes (the hub's unless given). */
  readonly dialect?: CodeDialect | undefined
  /** The level of the request log's line per answer (info unless given; see `requestLog`). */
  readonly answerLogLevel?: LogLevel.Severity | undefined
  /**
   * The service's one address for browsers, in development: a page asked for under another loopback name is
   * redirected to it (`canonicalHostRedirect`). Unset, none is.
   */
  readonly canonicalUrl?: string | undefined
}

/**
 * What every service's listener does before its router: one spelling of the request target (see
 * `canonicalTarget`), so the router and every rule that names a path see the same path; a target that cannot
 * name a route answers 404 in the service's error shape.
 */
export const canonicalRequests =
  (render: ErrorRenderer = envelopeRenderer) =>
  <E, R>(
    app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const target = canonicalTarget(request.url)
      if (target === undefined) return Effect.succeed(render(request, { code: "NOT_FOUND" }))
      if (target === request.url) return app
      return Effect.provideService(app, HttpServerRequest.HttpServerRequest, request.modify({ url: target }))
    })

/** `canonicalRequests`, after sending a page asked for under another name of this machine to `canonicalUrl`. */
const onePlace = (canonicalUrl: string, render?: ErrorRenderer) => {
  const redirect = canonicalHostRedirect(canonicalUrl)
  const canonical = canonicalRequests(render)
  return <E, R>(
    app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const moved = redirect(request)
      return moved === undefined ? canonical(app) : Effect.succeed(moved)
    })
}

/**
 * How `HttpRouter.serve` is called for a service: its router configuration, `canonicalRequests`, and with a
 * service id its request log (`requestLog`) in place of the router's.
 */
export const serveOptions = (
  render?: ErrorRenderer,
  service?: string,
  answerLogLevel?: LogLevel.Severity,
  canonicalUrl?: string
) => {
  const canonical = canonicalUrl === undefined ? canonicalRequests(render) : onePlace(canonicalUrl, render)
  if (service === undefined) return { routerConfig, middleware: canonical }
  const log = requestLog(service, answerLogLevel)
  return {
    routerConfig,
    disableLogger: true,
    middleware: <E, R>(app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) => log(canonical(app))
  }
}

const protocolErrors: Record<number, string> = {
  400: "The request could not be read as HTTP.",
  408: "The request took too long to arrive.",
  413: "The request is too large.",
  431: "The request headers (or the URL) are too large."
}

/** The status Node itself would answer a client error with (see node's `_http_server.js`). */
const protocolStatus = (code: unknown) =>
  code === "HPE_HEADER_OVERFLOW"
    ? 431
    : code === "HPE_CHUNK_EXTENSIONS_OVERFLOW"
      ? 413
      : code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? 408
        : 400

/**
 * Requests Node refuses before any route sees them (headers or URL over its limit, malformed HTTP, a request
 * that takes too long) are answered with the service's error body and Node's status, never an empty body.
 */
export const answerProtocolErrors = (
  server: Server,
  render: ErrorRenderer = envelopeRenderer,
  dialect: CodeDialect = "hub"
) => {
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === "ECONNRESET" || !socket.writable) {
      socket.destroy()
      return
    }
    const status = protocolStatus(error.code)
    // The request line, when Node kept it, so the renderer can answer in the shape of the path's routes.
    const rawPacket = (error as { readonly rawPacket?: unknown }).rawPacket
    const requestLine = Buffer.isBuffer(rawPacket) ? rawPacket.toString("latin1").split("\r\n", 1)[0] : undefined
    const url = requestLine?.split(" ")[1]
    const request = url === undefined ? undefined : { url, method: requestLine!.split(" ")[0]! }
    const response = render(request, {
      code:
        status === 413
          ? dialect === "decisions"
            ? "payload_too_large"
            : "PAYLOAD_TOO_LARGE"
          : validationCode(dialect),
      status,
      message: protocolErrors[status] ?? protocolErrors[400]!
    })
    const body = response.body._tag === "Uint8Array" ? response.body.body : new Uint8Array()
    socket.end(
      Buffer.concat([
        Buffer.from(
          `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
            `content-type: application/json\r\ncontent-length: ${body.byteLength}\r\nconnection: close\r\n\r\n`
        ),
        body
      ])
    )
  })
  return server
}

/**
 * A request that reaches the listener before its routes are served (the port opens when the listener's layer
 * is built; the router attaches when the service's layers are) is answered 503 with `Retry-After: 1` in the
 * service's error body, instead of being read and never answered: a health check or a peer that comes that
 * early gets its answer and tries again. From the moment the router listens for requests this does nothing.
 */
export const answerWhileStarting = (server: Server, render: ErrorRenderer = envelopeRenderer) => {
  server.on("request", (request: IncomingMessage, response: ServerResponse) => {
    if (server.listenerCount("request") > 1) return
    const answer = render(
      { url: request.url ?? "/", method: request.method ?? "GET" },
      { code: "UNAVAILABLE", status: 503, message: "The service is starting. Retry in a moment." }
    )
    const body = answer.body._tag === "Uint8Array" ? answer.body.body : new Uint8Array()
    response.writeHead(503, {
      "content-type": "application/json",
      "content-length": body.byteLength,
      "retry-after": "1",
      connection: "close"
    })
    response.end(body)
  })
  return server
}

/**
 * Completes when the server starts to shut down; never outside a server. Requests that could go on for long
 * (long-polls) end with it and answer at once, so the drain that follows is short. One effect per listener,
 * the same value for every request.
 */
export const ServerDraining = Context.Reference<Effect.Effect<void>>("adapters/http/ServiceHttp/ServerDraining", {
  defaultValue: () => Effect.never
})

/**
 * Serves routes on a Node listener. Closing the layer first announces the drain (`ServerDraining`), then
 * stops accepting and drains in-flight requests for up to `drainMillis`, then interrupts what is left.
 * The result needs what the routes need, less what the router and the Node server provide per request.
 * (The type is stated: inferred through `HttpRouter.serve`, middleware requirements widen it to unknown.)
 */
export const listen = <E, R>(
  routes: Layer.Layer<never, E, R>,
  options: ListenOptions
): Layer.Layer<
  never,
  E | HttpServerError.ServeError,
  Exclude<R, HttpRouter.HttpRouter | HttpRouter.Request<any, any> | NodeServed>
> =>
  Layer.unwrap(
    Effect.map(Deferred.make<void>(), (draining) => {
      const server = answerWhileStarting(
        answerProtocolErrors(createServer(), options.render, options.dialect),
        options.render
      )
      const served = HttpRouter.serve(
        routes,
        serveOptions(options.render, options.service, options.answerLogLevel, options.canonicalUrl)
      ).pipe(
        Layer.provide(Layer.succeed(ServerDraining, Deferred.await(draining))),
        Layer.provide(
          NodeHttpServer.layer(() => server, {
            port: options.port,
            host: options.host,
            gracefulShutdownTimeout: options.drainMillis ?? 10_000
          })
        )
      )
      // Built after the listener, so released before it: the drain is announced before it begins. A
      // connection that falls idle from then on is closed at once, not kept alive for the next request: the
      // drain would otherwise wait for every client's idle connection to time out.
      const announce = Layer.effectDiscard(
        Effect.addFinalizer(() =>
          Effect.andThen(
            Effect.sync(() => {
              server.keepAliveTimeout = 1
            }),
            Deferred.succeed(draining, undefined)
          )
        )
      )
      return Layer.provide(announce, served)
    })
  ) as never

type NodeServed =
  NodeServices.NodeServices | HttpPlatform.HttpPlatform | Etag.Generator | FileSystem.FileSystem | Path.Path
