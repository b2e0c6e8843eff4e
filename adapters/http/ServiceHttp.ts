import { NodeHttpServer, type NodeServices } from "@effect/platform-node"
import { Context, Deferred, Effect, Layer, type FileSystem, type Path } from "effect"
import { HttpRouter, type Etag, type HttpPlatform, type HttpServerError } from "effect/http"
import { HttpApiBuilder, type HttpApi, type HttpApiGroup } from "effect/http-api"
import { createServer } from "node:http"
import { errorEnvelopeMiddleware, type ErrorEnvelopeOptions } from "./ErrorEnvelopeMiddleware.ts"
import { routeLimits } from "./BodyLimit.ts"
import { openApiRoutes } from "./OpenApiRoutes.ts"

/**
 * One service's routes: its HttpApi contract with handlers, the OpenAPI document and docs page generated
 * from that contract, and the router-wide error envelope.
 */
export const serviceRoutes = <Id extends string, Groups extends HttpApiGroup.Constraint, E, R>(options: {
  readonly api: HttpApi.HttpApi<Id, Groups>
  readonly handlers: Layer.Layer<HttpApiGroup.ToService<Id, Groups>, E, R>
  readonly errors: ErrorEnvelopeOptions
}) =>
  Layer.mergeAll(
    HttpApiBuilder.layer(options.api).pipe(Layer.provide(options.handlers)),
    openApiRoutes(options.api),
    errorEnvelopeMiddleware({ ...options.errors, routeLimits: routeLimits(options.api) })
  )

export interface ListenOptions {
  readonly port: number
  readonly host: string
  /** How long in-flight requests may take to finish on shutdown. */
  readonly drainMillis?: number
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
      const server = createServer()
      const served = HttpRouter.serve(routes).pipe(
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
