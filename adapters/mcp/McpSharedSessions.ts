import { Clock, Effect, Layer, Predicate, Schedule, Scope } from "effect"
import { Headers, HttpEffect, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { createHash, randomBytes } from "node:crypto"
import { McpSessionStore } from "../../core/decisions/McpSessionStore.ts"
import { CurrentCaller } from "../http/decisions/Auth.ts"
import { errorResponse } from "../http/ErrorResponse.ts"

/** How MCP sessions are bounded: whatever a key sends, what they hold stays bounded. */
export interface McpSessionLimits {
  /** A session not used for this long is gone (404 to its next request; the client initializes again). */
  readonly idleMillis: number
  /** Sessions one caller key may hold; opening one more forgets its least recently used. */
  readonly maxPerKey: number
  /** The largest `initialize` params (JSON bytes) kept for a session. */
  readonly initializeMaxBytes: number
}

export const defaultMcpSessionLimits: McpSessionLimits = {
  idleMillis: 30 * 60_000,
  maxPerKey: 16,
  initializeMaxBytes: 8 * 1024
}

const sessionHeader = "mcp-session-id"
const protocolHeader = "mcp-protocol-version"

const hashOf = (sessionId: string) => createHash("sha256").update(sessionId).digest("hex")

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** A request the client did not send, made to the per-request server. */
const syntheticPost = (headers: Record<string, string>, body: unknown) =>
  HttpServerRequest.fromWeb(
    new Request("http://localhost/mcp", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      body: JSON.stringify(body)
    })
  )

/** The headers a request to the per-request server carries over from the client's. */
const forwardedHeaders = ["content-type", "accept", "origin", protocolHeader]

/** The client's request, with its session swapped for the per-request server's. */
const forwarded = (from: Headers.Headers, session: Record<string, string>, body: string) =>
  HttpServerRequest.fromWeb(
    new Request("http://localhost/mcp", {
      method: "POST",
      headers: {
        ...Object.fromEntries(
          forwardedHeaders.flatMap((name) => (from[name] === undefined ? [] : [[name, from[name]]]))
        ),
        ...session
      },
      body
    })
  )

/**
 * The MCP endpoint at `path`, with sessions that any instance of the service can serve and that live in the
 * McpSessionStore (Postgres in the bundled server), never in one process's memory. Each request runs on a
 * server of its own, built for the request and gone with it (`makeServer`, over the MCP toolkit's library):
 *
 * - `initialize` (params at most `initializeMaxBytes`) runs there; the session it opens is kept as its
 *   protocol revision and the client's params, under a new random id whose hash is stored with the key.
 * - Any other request names its session: the store gives it back (same key, used within `idleMillis`),
 *   the request's server is initialized with the kept params, then serves the request.
 * - DELETE ends the session. A key holds at most `maxPerKey` sessions; idle ones are purged hourly.
 *
 * Requests on a session are independent: a cancellation names a request of its own POST only.
 */
export const mcpSharedSessionRoutes = <R>(options: {
  readonly path: HttpRouter.PathInput
  readonly limits: McpSessionLimits
  /**
   * The MCP library's HTTP transport, registering its routes on the router it is given. Built once per
   * request, from only the services it names: it must not see the middleware of the routes here.
   */
  readonly server: Effect.Effect<
    Layer.Layer<never, never, HttpRouter.HttpRouter | HttpRouter.Request<"Requires", CurrentCaller>>,
    never,
    R
  >
}) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const store = yield* McpSessionStore
      const router = yield* HttpRouter.HttpRouter
      const server = yield* options.server
      const { limits } = options

      yield* Clock.currentTimeMillis.pipe(
        Effect.flatMap((now) => store.purgeIdle(now - limits.idleMillis)),
        Effect.repeat(Schedule.spaced("1 hour")),
        Effect.forkScoped
      )

      /** A fresh MCP server for this request, released with the request's scope (its answer may stream). */
      const makeServer = Effect.gen(function* () {
        const scope = yield* Scope.Scope
        const own = yield* HttpRouter.make
        // The tools read the caller from each request (provided around `handle` below), not from the layer.
        const routes = server as Layer.Layer<never, never, HttpRouter.HttpRouter>
        yield* Layer.buildWithScope(routes.pipe(Layer.provide(Layer.succeed(HttpRouter.HttpRouter, own))), scope)
        const handle = own.asHttpEffect() as unknown as Effect.Effect<
          HttpServerResponse.HttpServerResponse,
          unknown,
          CurrentCaller
        >
        // Served as a request of its own, so what the library adds as the answer leaves (its session header)
        // is in the answer this code reads.
        return (request: HttpServerRequest.HttpServerRequest) =>
          Effect.gen(function* () {
            let answer: HttpServerResponse.HttpServerResponse | undefined
            yield* HttpEffect.toHandled(handle, (_request, response) =>
              Effect.sync(() => {
                answer = response
              })
            ).pipe(Effect.provideService(HttpServerRequest.HttpServerRequest, request))
            return answer ?? (yield* Effect.die(new Error("the MCP server gave no answer")))
          })
      })

      const post = Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const caller = yield* CurrentCaller
        const text = yield* Effect.orElseSucceed(request.text, () => "")
        const message = parse(text)
        const now = yield* Clock.currentTimeMillis
        const serve = yield* makeServer

        if (Predicate.isObject(message) && message["method"] === "initialize") {
          const params = message["params"]
          if (JSON.stringify(params ?? null).length > limits.initializeMaxBytes) {
            return errorResponse("validation_error", {
              message: `The initialize params must be at most ${limits.initializeMaxBytes} bytes of JSON.`,
              details: [{ in: "body", field: "params", message: `must be at most ${limits.initializeMaxBytes} bytes` }]
            })
          }
          const response = yield* serve(request)
          const protocolVersion = response.headers[protocolHeader]
          if (response.headers[sessionHeader] === undefined || protocolVersion === undefined) return response
          const sessionId = randomBytes(32).toString("base64url")
          yield* store.open(
            { idHash: hashOf(sessionId), keyId: caller.keyId, protocolVersion, initialize: params, lastSeenAt: now },
            limits.maxPerKey
          )
          return HttpServerResponse.setHeader(response, sessionHeader, sessionId)
        }

        const sessionId = request.headers[sessionHeader]
        // Without a session the library answers as the protocol says (a session is required).
        if (sessionId === undefined) return yield* serve(request)
        const session = yield* store.use(hashOf(sessionId), caller.keyId, now - limits.idleMillis, now)
        if (session === undefined) {
          return errorResponse("NOT_FOUND", {
            message: "The MCP session is unknown or has ended; send initialize to start a new one."
          })
        }
        const started = yield* serve(
          syntheticPost({}, { jsonrpc: "2.0", id: 0, method: "initialize", params: session.initialize })
        )
        const ownId = started.headers[sessionHeader]
        if (ownId === undefined) return yield* Effect.die(new Error("a kept MCP session could not be started again"))
        const headers = { [sessionHeader]: ownId, [protocolHeader]: session.protocolVersion }
        yield* serve(syntheticPost(headers, { jsonrpc: "2.0", method: "notifications/initialized" }))
        const response = yield* serve(forwarded(request.headers, headers, text))
        return response.headers[sessionHeader] === undefined
          ? response
          : HttpServerResponse.setHeader(response, sessionHeader, sessionId)
      })

      const end = Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const caller = yield* CurrentCaller
        const sessionId = request.headers[sessionHeader]
        if (sessionId === undefined) {
          return errorResponse("validation_error", {
            details: [{ in: "header", field: sessionHeader, message: "is required to end a session" }]
          })
        }
        return (yield* store.end(hashOf(sessionId), caller.keyId))
          ? HttpServerResponse.empty({ status: 204 })
          : errorResponse("NOT_FOUND", { message: "The MCP session is unknown or has ended." })
      })

      const notAllowed = HttpServerResponse.empty({ status: 405, headers: { allow: "POST, DELETE" } })
      yield* router.add("POST", options.path, post)
      yield* router.add("DELETE", options.path, end)
      for (const method of ["GET", "PUT", "PATCH", "OPTIONS"] as const)
        yield* router.add(method, options.path, notAllowed)
    })
  )
