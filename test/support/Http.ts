import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, type Scope } from "effect"
import { HttpRouter, HttpServer, type HttpServerError } from "effect/http"
import { createServer } from "node:http"
import type { ErrorRenderer } from "../../adapters/http/ErrorResponse.ts"
import type { CodeDialect } from "../../adapters/http/ErrorResponse.ts"
import { RateLimitsMemory } from "../../adapters/http/RateLimits.ts"
import { answerProtocolErrors, serveOptions } from "../../adapters/http/ServiceHttp.ts"

/**
 * Serves routes on a loopback port (ephemeral unless `port` is given) for the life of the scope, as a service's listener does (its
 * router configuration, request targets and Node-level errors); answers the base URL. `render` is the
 * service's error shape for answers made before routing (the envelope unless given). The routes' rate limits
 * are kept in this server's memory unless the routes bring their own `RateLimits`.
 */
export const serveForTest = <E, R>(
  routes: Layer.Layer<never, E, R>,
  options: {
    readonly render?: ErrorRenderer | undefined
    readonly dialect?: CodeDialect | undefined
    readonly port?: number | undefined
  } = {}
): Effect.Effect<{ readonly baseUrl: string }, E | HttpServerError.ServeError, Scope.Scope> =>
  Effect.gen(function* () {
    const context = yield* Layer.build(
      HttpRouter.serve(routes.pipe(Layer.provide(RateLimitsMemory)), {
        ...serveOptions(options.render),
        disableLogger: true,
        disableListenLog: true
      }).pipe(
        Layer.provideMerge(
          NodeHttpServer.layer(() => answerProtocolErrors(createServer(), options.render, options.dialect), {
            port: options.port ?? 0,
            host: "127.0.0.1"
          })
        )
      )
    )
    const server = yield* Effect.provideContext(HttpServer.HttpServer, context)
    const address = server.address
    if (address._tag === "UnixPathAddress") return yield* Effect.die("expected an internet address")
    return { baseUrl: `http://127.0.0.1:${address.port}` }
    // The router's request-scoped requirements are provided per request; only the scope remains.
  }) as Effect.Effect<{ readonly baseUrl: string }, E | HttpServerError.ServeError, Scope.Scope>

export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: any
}

/** A plain fetch, so tests see the bytes a client sees. */
export const request = (url: string, init?: RequestInit) =>
  Effect.promise(async (): Promise<Answer> => {
    const response = await fetch(url, init)
    const text = await response.text()
    let json: unknown = undefined
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    return { status: response.status, headers: response.headers, text, json }
  })
